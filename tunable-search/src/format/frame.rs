//! # The frame of tunable's binary files
//!
//! The tuned file ([`super::tuned`]) and the device-binary artifacts beside it
//! ([`super::artifact`]) share one frame around their payload:
//!
//! ```text
//! magic: 8 bytes | format version: u32 LE | payload length: u64 LE | FNV-1a 64 of payload: u64 LE | payload
//! ```
//!
//! so that a truncated, corrupted, foreign or future-version file is recognized as such and
//! never decoded into garbage. Each format has its own magic bytes and version.
//!
//! ## Size limits
//!
//! A checksum proves that the bytes are those written, not that a writer was honest: a file
//! with a valid frame can still hold a bincode length of 2^62 bytes. Decoding is therefore
//! bounded twice, so that no file, damaged or hostile, aborts the process (an allocation
//! failure) or makes it allocate more than a small multiple of the file's size:
//! - a file larger than its format's maximum (`MAX_FILE`) is refused before it is read into
//!   memory, and a header announcing a larger payload before anything is decoded
//!   ([`DecodeError::TooLarge`]);
//! - bincode decodes with a limit on the memory it may claim: the smallest power of two (at
//!   least 4 KiB) not below eight times the payload's length. bincode claims each string's and
//!   byte list's length before allocating it, and each number at its size in memory (8 bytes
//!   for a `u64` stored in one), so an honest payload never claims more than eight times its
//!   length; a length field claiming more is refused before anything is allocated
//!   ([`DecodeError::LimitExceeded`]).
//!
//! Inside `#[tunable]` (rustc reads the tuned file while compiling) the second is a compile
//! error on the kernel's name.

use std::fmt;

/// Bytes before the payload.
const HEADER: usize = 8 + 4 + 8 + 8;

/// What is wrong with the bytes of a tunable file.
#[derive(Debug)]
#[non_exhaustive]
pub enum DecodeError {
    /// Shorter than the header, or not starting with the format's magic bytes.
    BadHeader,
    /// Written by a newer tunable.
    NewerVersion {
        /// The file's format version.
        version: u32,
        /// The newest version this build reads.
        newest: u32,
    },
    /// The payload is not as long as the header says.
    Length {
        /// Payload bytes present.
        got: usize,
        /// Payload bytes the header announces.
        expected: usize,
    },
    /// The payload's checksum does not match the header's.
    Checksum,
    /// The payload does not decode.
    Payload(bincode::error::DecodeError),
    /// The payload decodes but leaves bytes unread.
    TrailingBytes,
    /// The file, or the payload its header announces, is larger than the format allows.
    TooLarge {
        /// Its size in bytes.
        size: u64,
        /// The most this format reads.
        max: u64,
    },
    /// A length inside the payload claims more memory than the payload's size allows: damaged
    /// or forged, refused before anything is allocated.
    LimitExceeded {
        /// The payload's size in bytes.
        payload: usize,
        /// The most its decoding may claim (see the module docs).
        limit: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::BadHeader => write!(f, "not a tunable file (bad header)"),
            DecodeError::NewerVersion { version, newest } => write!(
                f,
                "written by a newer tunable (format {version}, this build reads up to {newest})"
            ),
            DecodeError::Length { got, expected } if got < expected => {
                write!(f, "truncated ({got} of {expected} payload bytes)")
            }
            DecodeError::Length { got, expected } => write!(
                f,
                "{got} payload bytes where the header announces {expected}"
            ),
            DecodeError::Checksum => write!(f, "checksum mismatch (corrupted)"),
            DecodeError::Payload(e) => write!(f, "undecodable payload: {e}"),
            DecodeError::TrailingBytes => write!(f, "trailing bytes after the payload"),
            DecodeError::TooLarge { size, max } => write!(
                f,
                "{size} bytes, more than the {max} bytes this format allows"
            ),
            DecodeError::LimitExceeded { payload, limit } => write!(
                f,
                "a length in the {payload}-byte payload claims more than the {limit} bytes it may \
                 allocate (damaged or forged)"
            ),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DecodeError::Payload(e) => Some(e),
            _ => None,
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `payload` in the frame of format `magic`, version `version`.
pub(crate) fn frame(magic: &[u8; 8], version: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The version and payload of a file of format `magic`, of which this build reads versions up
/// to `newest` and payloads up to `max` bytes; says precisely what is wrong with damaged bytes.
pub(crate) fn unframe<'a>(
    magic: &[u8; 8],
    newest: u32,
    max: u64,
    bytes: &'a [u8],
) -> Result<(u32, &'a [u8]), DecodeError> {
    if bytes.len() < HEADER || &bytes[..8] != magic {
        return Err(DecodeError::BadHeader);
    }
    let word = |at: usize, n: usize| {
        bytes[at..at + n]
            .iter()
            .rev()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b))
    };
    let version = word(8, 4) as u32;
    if version > newest {
        return Err(DecodeError::NewerVersion { version, newest });
    }
    let len = word(12, 8);
    if len > max {
        return Err(DecodeError::TooLarge { size: len, max });
    }
    let len = len as usize;
    let payload = &bytes[HEADER..];
    if payload.len() != len {
        return Err(DecodeError::Length {
            got: payload.len(),
            expected: len,
        });
    }
    if fnv1a(payload) != word(20, 8) {
        return Err(DecodeError::Checksum);
    }
    Ok((version, payload))
}

/// Reads the file at `path`, refusing one larger than `max` bytes before reading it.
pub(crate) fn read_capped(
    path: &std::path::Path,
    max: u64,
) -> std::io::Result<Result<Vec<u8>, DecodeError>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let too_large = |size| {
        Ok(Err(DecodeError::TooLarge {
            size,
            max: max + HEADER as u64,
        }))
    };
    if size > max + HEADER as u64 {
        return too_large(size);
    }
    // The file may grow while it is read: never read past the maximum.
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(max + HEADER as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max + HEADER as u64 {
        return too_large(bytes.len() as u64);
    }
    Ok(Ok(bytes))
}

/// Decodes a `T` from the start of `payload` with bincode's standard configuration, claiming at
/// most the smallest power of two not below eight times the payload's length (at least 4 KiB;
/// see the [module docs](self)); returns it with the bytes used.
pub(crate) fn decode_bounded<T: serde::de::DeserializeOwned>(
    payload: &[u8],
) -> Result<(T, usize), DecodeError> {
    use bincode::config::standard;
    use bincode::serde::decode_from_slice;
    let limit = payload
        .len()
        .saturating_mul(8)
        .max(4096)
        .next_power_of_two();
    // The limit is a type parameter: one instantiation per power of two up to 2^35.
    macro_rules! limited {
        ($($bits:literal)*) => {
            match limit.trailing_zeros() {
                $($bits => decode_from_slice(payload, standard().with_limit::<{ 1usize << $bits }>()),)*
                _ => return Err(DecodeError::TooLarge { size: payload.len() as u64, max: 1 << 32 }),
            }
        };
    }
    let decoded = limited!(12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35);
    decoded.map_err(|e| match e {
        bincode::error::DecodeError::LimitExceeded => DecodeError::LimitExceeded {
            payload: payload.len(),
            limit,
        },
        e => DecodeError::Payload(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_damage_is_named() {
        let bytes = frame(b"TESTFMT\0", 3, b"payload");
        assert_eq!(
            unframe(b"TESTFMT\0", 3, 100, &bytes).unwrap(),
            (3, &b"payload"[..])
        );
        let msg = |magic: &[u8; 8], newest, b: &[u8]| {
            unframe(magic, newest, 100, b).unwrap_err().to_string()
        };
        assert_eq!(
            msg(b"OTHERFMT", 3, &bytes),
            "not a tunable file (bad header)"
        );
        assert_eq!(
            msg(b"TESTFMT\0", 2, &bytes),
            "written by a newer tunable (format 3, this build reads up to 2)"
        );
        assert!(msg(b"TESTFMT\0", 3, &bytes[..bytes.len() - 1]).contains("truncated"));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(
            msg(b"TESTFMT\0", 3, &flipped),
            "checksum mismatch (corrupted)"
        );
        assert_eq!(
            unframe(b"TESTFMT\0", 3, 4, &bytes).unwrap_err().to_string(),
            "7 bytes, more than the 4 bytes this format allows"
        );
    }

    /// A string length of 2^62 in a payload of a few bytes: refused before allocating, so a
    /// forged file cannot make the reader abort on an allocation failure.
    #[test]
    fn a_huge_length_is_refused_before_allocating() {
        let mut payload = Vec::new();
        // bincode's varint: 0xFD then a u64 LE.
        payload.push(0xfd);
        payload.extend_from_slice(&(1u64 << 62).to_le_bytes());
        payload.extend_from_slice(b"abc");
        let err = decode_bounded::<String>(&payload).unwrap_err();
        assert!(matches!(
            err,
            DecodeError::LimitExceeded {
                payload: 12,
                limit: 4096
            }
        ));
        assert!(err.to_string().contains("claims more than the 4096 bytes"));
        // An honest payload of any size decodes.
        let long = "x".repeat(10_000);
        let bytes = bincode::serde::encode_to_vec(&long, bincode::config::standard()).unwrap();
        assert_eq!(
            decode_bounded::<String>(&bytes).unwrap(),
            (long, bytes.len())
        );
    }
}
