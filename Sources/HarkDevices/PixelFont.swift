/// A 5×7 bitmap font for the simulated camera's caption: digits, capitals and the punctuation of a
/// timestamp. Lower case is drawn as upper case; anything else as a filled box, so a missing glyph
/// shows instead of vanishing.
enum PixelFont {
    static let glyphWidth = 5
    static let glyphHeight = 7
    /// Horizontal distance from one glyph to the next, in font pixels (one column of space).
    static let advance = 6

    /// The rows of `character`, top first; bit 4 is the leftmost column.
    static func rows(_ character: Character) -> [UInt8] {
        // Only a one-character upper case maps to a glyph ("ß" upper-cases to "SS": it gets the box).
        let upper = character.uppercased()
        let key = upper.count == 1 ? Character(upper) : character
        return glyphs[key] ?? Array(repeating: 0b11111, count: glyphHeight)
    }

    /// One glyph per line: the character, then seven rows of five columns (`#` on, `.` off).
    private static let art = """
        0 .###. #...# #..## #.#.# ##..# #...# .###.
        1 ..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.
        2 .###. #...# ....# ...#. ..#.. .#... #####
        3 ##### ...#. ..#.. ...#. ....# #...# .###.
        4 ...#. ..##. .#.#. #..#. ##### ...#. ...#.
        5 ##### #.... ####. ....# ....# #...# .###.
        6 ..##. .#... #.... ####. #...# #...# .###.
        7 ##### ....# ...#. ..#.. .#... .#... .#...
        8 .###. #...# #...# .###. #...# #...# .###.
        9 .###. #...# #...# .#### ....# ...#. .##..
        A .###. #...# #...# ##### #...# #...# #...#
        B ####. #...# #...# ####. #...# #...# ####.
        C .###. #...# #.... #.... #.... #...# .###.
        D ###.. #..#. #...# #...# #...# #..#. ###..
        E ##### #.... #.... ####. #.... #.... #####
        F ##### #.... #.... ####. #.... #.... #....
        G .###. #...# #.... #.### #...# #...# .####
        H #...# #...# #...# ##### #...# #...# #...#
        I .###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.
        J ..### ...#. ...#. ...#. ...#. #..#. .##..
        K #...# #..#. #.#.. ##... #.#.. #..#. #...#
        L #.... #.... #.... #.... #.... #.... #####
        M #...# ##.## #.#.# #.#.# #...# #...# #...#
        N #...# #...# ##..# #.#.# #..## #...# #...#
        O .###. #...# #...# #...# #...# #...# .###.
        P ####. #...# #...# ####. #.... #.... #....
        Q .###. #...# #...# #...# #.#.# #..#. .##.#
        R ####. #...# #...# ####. #.#.. #..#. #...#
        S .#### #.... #.... .###. ....# ....# ####.
        T ##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
        U #...# #...# #...# #...# #...# #...# .###.
        V #...# #...# #...# #...# #...# .#.#. ..#..
        W #...# #...# #...# #.#.# #.#.# #.#.# .#.#.
        X #...# #...# .#.#. ..#.. .#.#. #...# #...#
        Y #...# #...# .#.#. ..#.. ..#.. ..#.. ..#..
        Z ##### ....# ...#. ..#.. .#... #.... #####
        - ..... ..... ..... ##### ..... ..... .....
        : ..... .##.. .##.. ..... .##.. .##.. .....
        . ..... ..... ..... ..... ..... .##.. .##..
        / ..... ....# ...#. ..#.. .#... #.... .....
        # .#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.
        """

    private static let glyphs: [Character: [UInt8]] = {
        var glyphs: [Character: [UInt8]] = [" ": Array(repeating: 0, count: glyphHeight)]
        for line in art.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let character = fields.first?.first else { continue }
            glyphs[character] = fields.dropFirst().map { row in
                row.reduce(UInt8(0)) { bits, cell in bits << 1 | (cell == "#" ? 1 : 0) }
            }
        }
        return glyphs
    }()
}
