/// The encryption key of the encrypted seeds `MakeCorpus` writes (`corpus/open-store/encrypted-*`),
/// with which FuzzOpenStore opens every input whose header says it is encrypted: the 32 bytes 0, 1,
/// …, 31 (what `EncryptionKey(bytes:)` takes). Only bytes here, so that this target needs nothing of
/// CellarStorage.
public enum FuzzKey {
    public static let bytes: [UInt8] = (0..<32).map { UInt8($0) }
}
