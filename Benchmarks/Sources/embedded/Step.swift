/// The timed steps, in the order they run on each engine.
enum Step: String, CaseIterable {
    case insert
    case get
    case sku
    case skuQuantity = "sku-qty"
    case update
    case remove

    var title: String {
        switch self {
        case .insert: "insert N orders with lines, one txn (orders/s)"
        case .get: "get by id, random, built with lines (orders/s)"
        case .sku: "ids of orders with a line sku == X (q/s)"
        case .skuQuantity: "ids with one line sku == X && qty >= 3 (q/s)"
        case .update: "replace the lines of N/10 orders, one txn (orders/s)"
        case .remove: "remove N/10 orders with lines, one txn (orders/s)"
        }
    }

    /// Operations the step's rate counts: orders, or lookups.
    func ops(_ w: Workload) -> Int {
        switch self {
        case .insert, .get: w.n
        case .sku, .skuQuantity: Workload.lookups
        case .update, .remove: w.changed
        }
    }
}
