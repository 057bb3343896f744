import Cellar
import Foundation

// Entities whose bindings the generator writes (EntityInfo-CellarTests.generated.swift, next to
// this file, with model-CellarTests.json). The generator's golden test regenerates them and
// compares; GeneratedBindingTests stores and reads them through the generated code. After a
// change here, run:
//   swift run cellar-generator --target CellarTests --sources Tests/CellarTests/Generated \
//     --model Tests/CellarTests/Generated/model-CellarTests.json \
//     --output Tests/CellarTests/Generated/EntityInfo-CellarTests.generated.swift

enum Priority: Int32 {
    case unknown = 0
    case low = 1
    case high = 2
}

enum Mood: String {
    case calm
    case busy
}

struct Temperature: Equatable {
    var celsius: Double
    /// What a missing value reads as, through `TemperatureConverter`.
    static let unknown = Temperature(celsius: -999)
}

/// Takes an optional: gets nil for a missing value.
enum TemperatureConverter {
    static func convert(_ temperature: Temperature) -> Double { temperature.celsius }
    static func convert(_ celsius: Double?) -> Temperature { celsius.map(Temperature.init(celsius:)) ?? .unknown }
}

/// Takes a non-optional: gets 0 for a missing value.
enum StrictTemperatureConverter {
    static func convert(_ temperature: Temperature) -> Double { temperature.celsius }
    static func convert(_ celsius: Double) -> Temperature { Temperature(celsius: celsius) }
}

final class Ticket: Entity {
    var id: Id = 0
    // cellar: name = "headline"
    var title: String = ""
    // cellar: convert = { "default": ".unknown" }
    var priority: Priority = .unknown
    // cellar: convert = {}
    var mood: Mood?
    // cellar: convert = { "dbType": "Double", "converter": "TemperatureConverter" }
    var temperature: Temperature = Temperature(celsius: 20)
    // cellar: convert = { "dbType": "Double", "converter": "StrictTemperatureConverter" }
    var strictTemperature: Temperature = Temperature(celsius: 20)
    // cellar: date-nano
    var precise: Date = Date(timeIntervalSince1970: 0)
    var due: Date?
    var count: UInt16 = 0
    var tiny: Int8?
    // cellar: transient
    var scratch = "not stored"

    required init() {}
}

struct Reading: Entity, Equatable {
    var id: EntityId<Reading> = 0
    var value: Double = 0
    var label: String?
    var bytes: [UInt8] = []
    var blob: Data?
    var flag: Bool = false
}
