import Foundation

/// One token of an utterance, as the system-entity recognisers see it.
///
/// Words are lowercased ASCII letter runs; digits are ASCII digit runs; every other visible scalar is a
/// one-scalar symbol. Offsets are Unicode-scalar offsets into the original text, `[start, end)`, which is
/// what `EntityMatch` reports. `spaceBefore` tells "5pm" from "5 pm" and "1,000" from "1, 000".
struct SysToken {
    enum Kind: UInt8 { case word, digits, symbol, other }

    var kind: Kind
    /// Lowercased text for words, the digits for digit runs, the scalar for symbols; empty for `other`
    /// (letters outside ASCII), so such words never match a table entry.
    var text: String
    var start: Int
    var end: Int
    var lo: String.UnicodeScalarView.Index
    var hi: String.UnicodeScalarView.Index
    var spaceBefore: Bool
}

/// Splits `text` into `SysToken`s in one pass over its Unicode scalars.
func sysTokenize(_ text: String) -> [SysToken] {
    let scalars = text.unicodeScalars
    var tokens: [SysToken] = []
    var idx = scalars.startIndex
    var offset = 0
    var space = true
    var bytes: [UInt8] = []  // one buffer reused for every token
    bytes.reserveCapacity(32)
    while idx != scalars.endIndex {
        let s = scalars[idx]
        let v = s.value
        if v >= 48 && v <= 57 {
            let lo = idx, start = offset
            bytes.removeAll(keepingCapacity: true)
            while idx != scalars.endIndex, scalars[idx].value >= 48, scalars[idx].value <= 57 {
                bytes.append(UInt8(scalars[idx].value))
                idx = scalars.index(after: idx)
                offset += 1
            }
            tokens.append(SysToken(kind: .digits, text: String(decoding: bytes, as: UTF8.self), start: start,
                                   end: offset, lo: lo, hi: idx, spaceBefore: space))
            space = false
        } else if isWordScalar(s) {
            let lo = idx, start = offset
            bytes.removeAll(keepingCapacity: true)
            var ascii = true
            while idx != scalars.endIndex, isWordScalar(scalars[idx]) {
                let c = scalars[idx].value
                if c < 128 {
                    bytes.append(UInt8(c >= 65 && c <= 90 ? c + 32 : c))
                } else {
                    ascii = false
                }
                idx = scalars.index(after: idx)
                offset += 1
            }
            tokens.append(SysToken(kind: ascii ? .word : .other, text: ascii ? String(decoding: bytes, as: UTF8.self) : "",
                                   start: start, end: offset, lo: lo, hi: idx, spaceBefore: space))
            space = false
        } else if v == 32 || v == 9 || v == 10 || v == 13 || s.properties.isWhitespace {
            space = true
            idx = scalars.index(after: idx)
            offset += 1
        } else {
            let lo = idx
            idx = scalars.index(after: idx)
            // Typographic apostrophes read as the ASCII one.
            let t = v == 0x2019 ? "'" : String(s)
            tokens.append(SysToken(kind: .symbol, text: t, start: offset, end: offset + 1, lo: lo, hi: idx,
                                   spaceBefore: space))
            offset += 1
            space = false
        }
    }
    return tokens
}

@inline(__always)
private func isWordScalar(_ s: Unicode.Scalar) -> Bool {
    let v = s.value
    if v < 128 { return (v >= 97 && v <= 122) || (v >= 65 && v <= 90) }
    if v >= 0x300 && v <= 0x36F { return true }  // combining marks stay inside their word
    let p = s.properties
    return p.isAlphabetic || p.generalCategory == .nonspacingMark || p.generalCategory == .spacingMark
}
