//! Weighted choice in O(1) per draw with Vose's alias method: one random `u64` picks a column
//! (high bits) and decides between the column and its alias (low bits). Built once per choice at
//! compile time; sampling neither allocates nor branches more than once.

#[derive(Clone, Debug)]
pub struct Alias {
    /// Per column: keep the column when the low 32 random bits are below this.
    keep: Vec<u32>,
    alias: Vec<u32>,
}

impl Alias {
    /// `weights` must be non-empty; zero weights are never drawn.
    #[allow(
        clippy::indexing_slicing,
        reason = "scaled, keep and alias all have n entries, and every index (from 0..n, small or \
                  large) is < n"
    )]
    pub fn new(weights: &[u32]) -> Alias {
        let n = weights.len().max(1);
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum::<u64>().max(1);
        // Scaled probabilities in units of total: p_i * n = w_i * n / total.
        let mut scaled: Vec<u128> = weights.iter().map(|w| u128::from(*w) * n as u128).collect();
        scaled.resize(n, 0);
        let t = u128::from(total);
        let mut keep = vec![u32::MAX; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < t);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            // keep s with probability scaled[s] / t, else go to l.
            keep[s] = ((scaled[s] << 32) / t).min(u128::from(u32::MAX)) as u32;
            alias[s] = l as u32;
            scaled[l] -= t - scaled[s];
            if scaled[l] < t {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers (rounding) keep themselves.
        for i in large.into_iter().chain(small) {
            keep[i] = u32::MAX;
            alias[i] = i as u32;
        }
        Alias { keep, alias }
    }

    pub fn len(&self) -> usize {
        self.keep.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keep.is_empty()
    }

    #[inline]
    #[allow(
        clippy::indexing_slicing,
        reason = "per-event hot path; col = ((r >> 32) * n) >> 32 is < n = keep.len() = \
                  alias.len()"
    )]
    pub fn sample(&self, r: u64) -> usize {
        let n = self.keep.len() as u64;
        let col = (((r >> 32) * n) >> 32) as usize;
        if (r as u32) < self.keep[col] || self.keep[col] == u32::MAX {
            col
        } else {
            self.alias[col] as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn freq(weights: &[u32], draws: u64) -> Vec<f64> {
        let a = Alias::new(weights);
        let mut c = vec![0u64; weights.len()];
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..draws {
            // splitmix64
            x = x.wrapping_add(0x9e3779b97f4a7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            c[a.sample(z ^ (z >> 31))] += 1;
        }
        c.iter().map(|v| *v as f64 / draws as f64).collect()
    }

    #[test]
    fn matches_weights() {
        let w = [70, 20, 9, 1];
        let f = freq(&w, 400_000);
        for (got, want) in f.iter().zip([0.70, 0.20, 0.09, 0.01]) {
            assert!((got - want).abs() < 0.005, "{f:?}");
        }
    }

    #[test]
    fn zero_weight_never_drawn_and_single_column() {
        let f = freq(&[0, 5, 0, 5], 100_000);
        assert_eq!(f[0], 0.0);
        assert_eq!(f[2], 0.0);
        assert_eq!(freq(&[3], 1000), vec![1.0]);
    }

    #[test]
    fn extreme_skew() {
        let f = freq(&[1_000_000, 1], 2_000_000);
        assert!(f[1] > 0.0 && f[1] < 0.00001, "{f:?}");
    }
}
