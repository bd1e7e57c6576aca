/// The phone set of PocketSphinx's en-us acoustic model: the 39 ARPAbet phones of the CMU dictionary,
/// without stress digits (the model's `mdef` also has `SIL` and the noise phones `+NSN+`, `+SPN+`,
/// which no word's pronunciation uses).
public enum ARPAbet {
    /// AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH.
    public static let phones: [String] = [
        "AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G", "HH", "IH", "IY",
        "JH", "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T", "TH", "UH", "UW", "V", "W", "Y",
        "Z", "ZH",
    ]

    public static let phoneSet = Set(phones)

    /// `phone` as the acoustic model spells it: upper case, a CMU stress digit (0, 1, 2) dropped;
    /// nil if it is not one of the 39 phones.
    public static func normalised<S: StringProtocol>(_ phone: S) -> String? {
        var name = phone.uppercased()
        if let last = name.last, "012".contains(last) { name.removeLast() }
        return phoneSet.contains(name) ? name : nil
    }
}
