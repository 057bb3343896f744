/// A JSON value as read from a model file, keeping what a round trip must not change: the order
/// of an object's members and each number's text.
public indirect enum JSONValue: Hashable, Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as written (so that large integers and their exact digits survive a round trip).
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// Members in the order they were read.
    case object([JSONMember])
}

/// One `"name": value` member of a JSON object.
public struct JSONMember: Hashable, Sendable {
    /// The member's name.
    public var name: String
    /// The member's value.
    public var value: JSONValue

    /// A member `name` with `value`.
    public init(_ name: String, _ value: JSONValue) {
        self.name = name
        self.value = value
    }
}
