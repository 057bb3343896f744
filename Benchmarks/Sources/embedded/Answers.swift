/// An engine's answers to the steps: each is also checked against the workload's expected ones
/// inside the engine's run; the harness then checks that both engines gave the same.
struct Answers: Equatable {
    /// The orders the get step built, summed.
    var got = Totals()
    /// The ids (ascending) each lookup of the sku and sku-qty steps found.
    var sku: [[Int64]] = []
    var skuQuantity: [[Int64]] = []
    /// After the remove: every stored order summed, and the sku lookups again.
    var final = Totals()
    var finalSku: [[Int64]] = []
}
