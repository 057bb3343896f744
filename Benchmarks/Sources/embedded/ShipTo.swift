import Cellar

/// A line's delivery address: an embedded object inside an embedded `OrderLine`.
// cellar: embedded
struct ShipTo: Equatable {
    var city: String = ""
    var zip: String = ""
}
