import Cellar

/// One line of an `Order`: an embedded object (no id, no box), kept in its order's record.
/// `sku` is indexed: `Order.lines.sku == X` takes its candidate orders from that index.
// cellar: embedded
struct OrderLine: Equatable {
    /// `SKU-%04d`, one of 1,000.
    // cellar: index
    var sku: String = ""
    /// 1 to 6.
    var quantity: Int = 0
    /// Whole cents, as a Double (`Double(cents) / 100`).
    var price: Double = 0
    /// Where this line ships to when not to the customer's address: on about one line in five.
    var shipTo: ShipTo?
}
