/// Helpers the generated bindings call for `// cellar: convert` properties.
@_spi(CellarGenerated) public enum Converting {
    /// Hands a stored value to a converter that takes an optional: nil when the record has no
    /// value (a property added after the record was written).
    @inlinable
    public static func read<D, T>(_ value: D?, zero: D, _ convert: (D?) -> T) -> T { convert(value) }

    /// Hands a stored value to a converter that takes a non-optional: the database type's zero
    /// value (`0`, `""`, …) when the record has no value.
    @inlinable
    public static func read<D, T>(_ value: D?, zero: D, _ convert: (D) -> T) -> T { convert(value ?? zero) }
}
