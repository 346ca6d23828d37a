//! The fast hasher of the engine's own maps (the replay reader's names and triples, the
//! automaton's runs and partitions, the GPMs' event indexes): keys the engine made itself,
//! not chosen by an adversary it must resist. It sits low, beside the dictionary, so that
//! every crate above takes it from here.

use std::hash::{BuildHasherDefault, Hasher};

/// A fast hasher for the engine's own maps: 8 bytes per multiply, a final mix so that every
/// bit counts.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl FastHasher {
    #[inline]
    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(MULTIPLIER).rotate_left(29);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in chunks.by_ref() {
            self.word(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder().len();
        if rest == 0 {
            return;
        }
        // the last 8 bytes (overlapping the last chunk) when there are that many: one load,
        // not a copy into a zeroed word
        let last = match bytes.len().checked_sub(8) {
            Some(from) => u64::from_le_bytes(bytes[from..].try_into().unwrap_or_default()),
            None => bytes.iter().rev().fold(0, |w, &b| (w << 8) | u64::from(b)),
        };
        self.word(last ^ ((rest as u64) << 59));
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i) | 0x100);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // murmur3's finaliser
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// The fast hasher as a map's `BuildHasher`.
pub type Fast = BuildHasherDefault<FastHasher>;
