// OpenSSL's libcrypto (1.1 or 3.x), for encryption at rest on Linux: AES-256-GCM (EVP), HMAC-SHA256
// and scrypt. See Sources/CellarStorage/Encryption/Primitives/.
#include <openssl/evp.h>
#include <openssl/hmac.h>

// AES-256-GCM's implementation, fetched once: on OpenSSL 3 an explicit fetch, because passing
// EVP_aes_256_gcm() to every EVP_EncryptInit_ex makes each call look its provider up again.
static inline EVP_CIPHER *cellar_aes_256_gcm(void) {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    return EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
#else
    return (EVP_CIPHER *)EVP_aes_256_gcm();
#endif
}
