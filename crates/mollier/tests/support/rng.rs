//! A small deterministic generator (xorshift), for reproducible random points in the tests of
//! derivatives.

pub struct Rng(pub u64);

impl Rng {
    /// Uniform in `[0, 1)`.
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[-1, 1)`.
    #[allow(dead_code)] // not every test that includes the module draws symmetric values
    pub fn sym(&mut self) -> f64 {
        2.0 * self.next() - 1.0
    }
}
