//! Hex digests for cache keys and file names: SHA-256 from the `sha2` crate, and one hex
//! encoder for every digest and sealed payload clprism writes.

use sha2::{Digest, Sha256};

/// SHA-256 digest of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// SHA-256 of `data` as 64 lowercase hex digits.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&sha256(data))
}

/// `bytes` as lowercase hex, two digits per byte.
///
/// A table lookup per digit: the binary cache hex-encodes whole sealed kernel sources
/// (hundreds of KB for CLBlast's programs) on the app's thread, where formatting each byte
/// with `format!` cost milliseconds per program.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0xf) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vectors() {
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn hex_matches_format() {
        let bytes: Vec<u8> = (0..=255).collect();
        let by_format: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(super::hex(&bytes), by_format);
        assert_eq!(super::hex(&[]), "");
    }
}
