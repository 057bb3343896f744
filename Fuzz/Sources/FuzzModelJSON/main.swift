// libFuzzer target: the input is a model JSON file (ObjectBox's format, `model-<Target>.json`).
//
// 1. The input is parsed as JSON (`JSONParser`); when that succeeds, the value is written
//    (`JSONWriter`), the text parsed again, and it must give the same value, and writing that
//    value again the same bytes.
// 2. The input is read as a model (`Model(json:)`); when that succeeds, the model is written
//    (`jsonBytes()`), the text read again, and it must give the same model, and writing that model
//    again the same bytes.
//
// A thrown `CellarError` is the expected answer to a malformed file; a crash, a trap, an
// AddressSanitizer report or a round trip that does not give back what was written is a bug in
// the parser or the writer.
//
// libFuzzer passes a heap copy of exactly `size` bytes, so ASan catches any read past the input.
@_spi(Testing) import Cellar

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)

    if let value = try? JSONParser.parse(input) {
        let written = JSONWriter.bytes(value)
        let reread: JSONValue
        do {
            reread = try JSONParser.parse(written)
        } catch {
            fatalError("JSONWriter wrote text JSONParser rejects: \(error)")
        }
        precondition(reread == value, "JSON round trip changed the value")
        precondition(JSONWriter.bytes(reread) == written, "JSONWriter wrote a value differently the second time")
    }

    if let model = try? Model(json: Array(input)) {
        let written = model.jsonBytes()
        let reread: Model
        do {
            reread = try Model(json: written)
        } catch {
            fatalError("Model.jsonBytes() wrote a file Model(json:) rejects: \(error)")
        }
        precondition(reread == model, "model round trip changed the model")
        precondition(reread.jsonBytes() == written, "Model.jsonBytes() wrote the model differently the second time")
    }
    return 0
}
