@testable import Cellar
import CellarTestSupport
import Testing

/// The chunked list behind live results: random batches of edits against a plain array.
@Suite struct ChunkedListTests {
    @Test(arguments: [0, 1, 300, 5_000])
    func randomEditsMatchAnArray(initialCount: Int) {
        var rng = SplitMix64(seed: UInt64(initialCount) &+ 17)
        var model = Array(0..<initialCount)
        var list = ChunkedList(model)
        var next = initialCount
        for round in 0..<300 {
            // A batch of edits at ascending positions of the current list.
            var edits: [ChunkedList<Int>.Edit] = []
            var expected: [Int] = []
            var copied = 0
            var position = 0
            let step = max(1, model.count / Int(rng.next() % 8 + 1))
            while position <= model.count {
                expected.append(contentsOf: model[copied..<position])
                copied = position
                for _ in 0..<Int(rng.next() % 3) {
                    edits.append(.init(position: position, kind: .insert(next)))
                    expected.append(next)
                    next += 1
                }
                if position < model.count {
                    switch rng.next() % 3 {
                    case 0:
                        edits.append(.init(position: position, kind: .remove))
                        copied = position + 1
                    case 1:
                        edits.append(.init(position: position, kind: .replace(-model[position] - 1)))
                        expected.append(-model[position] - 1)
                        copied = position + 1
                    default:
                        break
                    }
                }
                position += Int(rng.next() % UInt64(step)) + 1
            }
            expected.append(contentsOf: model[min(copied, model.count)...])
            let before = Array(list)
            list = list.applying(edits)
            #expect(Array(before) == model, "the list edits made a new version and left the old one as it was")
            model = expected
            #expect(list.count == model.count, "round \(round)")
            #expect(Array(list) == model, "round \(round): iteration")
            #expect(list.array == model, "round \(round): as an array")
            for _ in 0..<20 where !model.isEmpty {
                let i = Int(rng.next() % UInt64(model.count))
                #expect(list[i] == model[i], "round \(round): index \(i)")
            }
            // No chunk is empty or over twice the chunk size, and small ones are joined enough
            // that there are not many more chunks than full ones would make.
            let size = ChunkedList<Int>.chunkSize
            #expect(list.chunks.allSatisfy { !$0.isEmpty && $0.count <= 2 * size })
            #expect(list.chunks.count <= 2 * (model.count / (size / 4)) + 2, "round \(round): \(list.chunks.count) chunks")
        }
    }

    @Test func insertsIntoAnEmptyList() {
        let list = ChunkedList<Int>().applying([.init(position: 0, kind: .insert(1)), .init(position: 0, kind: .insert(2))])
        #expect(Array(list) == [1, 2])
        #expect(ChunkedList<Int>().applying([]).isEmpty)
    }
}
