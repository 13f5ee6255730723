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
/// to `newest`; says precisely what is wrong with damaged bytes.
pub(crate) fn unframe<'a>(
    magic: &[u8; 8],
    newest: u32,
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
    let len = word(12, 8) as usize;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_damage_is_named() {
        let bytes = frame(b"TESTFMT\0", 3, b"payload");
        assert_eq!(
            unframe(b"TESTFMT\0", 3, &bytes).unwrap(),
            (3, &b"payload"[..])
        );
        let msg =
            |magic: &[u8; 8], newest, b: &[u8]| unframe(magic, newest, b).unwrap_err().to_string();
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
    }
}
