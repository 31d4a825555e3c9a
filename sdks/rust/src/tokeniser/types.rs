//! Shared vocabulary of the tokeniser.

/// Every category the engine can tokenise. The alias of a value carries its category, e.g. `<EMAIL_1_k3f9>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityType {
    Email,
    Phone,
    Card,
    UsSsn,
    UkNino,
    EsDni,
    FrNir,
    NlBsn,
    NationalId,
    Iban,
    Ipv4,
    Ipv6,
    DateOfBirth,
    Passport,
    /// The machine-readable zone of a passport or identity card (ICAO 9303), whole.
    Mrz,
    CryptoWallet,
    UrlCredentials,
    Person,
}

pub const ENTITY_TYPES: [EntityType; 18] = [
    EntityType::Email,
    EntityType::Phone,
    EntityType::Card,
    EntityType::UsSsn,
    EntityType::UkNino,
    EntityType::EsDni,
    EntityType::FrNir,
    EntityType::NlBsn,
    EntityType::NationalId,
    EntityType::Iban,
    EntityType::Ipv4,
    EntityType::Ipv6,
    EntityType::DateOfBirth,
    EntityType::Passport,
    EntityType::Mrz,
    EntityType::CryptoWallet,
    EntityType::UrlCredentials,
    EntityType::Person,
];

impl EntityType {
    pub fn as_str(self) -> &'static str {
        match self {
            EntityType::Email => "EMAIL",
            EntityType::Phone => "PHONE",
            EntityType::Card => "CARD",
            EntityType::UsSsn => "US_SSN",
            EntityType::UkNino => "UK_NINO",
            EntityType::EsDni => "ES_DNI",
            EntityType::FrNir => "FR_NIR",
            EntityType::NlBsn => "NL_BSN",
            EntityType::NationalId => "NATIONAL_ID",
            EntityType::Iban => "IBAN",
            EntityType::Ipv4 => "IPV4",
            EntityType::Ipv6 => "IPV6",
            EntityType::DateOfBirth => "DATE_OF_BIRTH",
            EntityType::Passport => "PASSPORT",
            EntityType::Mrz => "MRZ",
            EntityType::CryptoWallet => "CRYPTO_WALLET",
            EntityType::UrlCredentials => "URL_CREDENTIALS",
            EntityType::Person => "PERSON",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        ENTITY_TYPES.iter().copied().find(|t| t.as_str() == name)
    }

    /// Rank in the overlap priority: the earlier type wins (detectStructured.ts PRIORITY).
    pub fn priority(self) -> usize {
        PRIORITY.iter().position(|t| *t == self).unwrap_or(usize::MAX)
    }
}

impl std::fmt::Display for EntityType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When two detections overlap, the earlier type in this list wins.
pub const PRIORITY: [EntityType; 18] = [
    EntityType::Mrz,
    EntityType::UrlCredentials,
    EntityType::Email,
    EntityType::Iban,
    EntityType::Card,
    EntityType::FrNir,
    EntityType::UsSsn,
    EntityType::UkNino,
    EntityType::EsDni,
    EntityType::NlBsn,
    EntityType::NationalId,
    EntityType::DateOfBirth,
    EntityType::Passport,
    EntityType::CryptoWallet,
    EntityType::Ipv6,
    EntityType::Ipv4,
    EntityType::Phone,
    EntityType::Person,
];

/// A detected value: byte offsets into the scanned text, `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub ty: EntityType,
}

impl Span {
    pub fn new(start: usize, end: usize, ty: EntityType) -> Self {
        Span { start, end, ty }
    }
}
