//! Memory-access counting for the lab decoders: each decoder reports every read it makes
//! (region, offset, length) to a [`Probe`]; [`Counter`] turns one pose's reads into distinct bytes
//! and distinct 64-byte cache lines (each region assumed 64-byte aligned), [`NoProbe`] compiles
//! to nothing for the timed runs.

/// Cache line size assumed by the counters.
pub(crate) const CACHE_LINE: usize = 64;

/// Where a read lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Region {
    /// The compressed clip buffer.
    Clip,
    /// Per-clip state a reader builds once (the uniform reader's decoded constants and ranges).
    Reader,
    /// Per-instance playback state (the sorted stream's context).
    Context,
}

pub trait Probe {
    fn read(&mut self, region: Region, offset: usize, len: usize);
}

/// The probe of timed runs: does nothing.
pub struct NoProbe;

impl Probe for NoProbe {
    #[inline(always)]
    fn read(&mut self, _: Region, _: usize, _: usize) {}
}

/// Records reads; [`Counter::end_pose`] sums one pose's distinct bytes and cache lines.
#[derive(Default)]
pub struct Counter {
    reads: Vec<(Region, usize, usize)>,
    pub poses: u64,
    pub bytes: u64,
    pub lines: u64,
}

impl Probe for Counter {
    #[inline]
    fn read(&mut self, region: Region, offset: usize, len: usize) {
        if len > 0 {
            self.reads.push((region, offset, offset + len));
        }
    }
}

impl Counter {
    /// Closes one pose: adds its distinct bytes and lines to the totals and returns them.
    pub fn end_pose(&mut self) -> (u64, u64) {
        self.reads.sort_unstable();
        let (mut bytes, mut lines) = (0u64, 0u64);
        let mut cur: Option<(Region, usize, usize)> = None;
        let mut last_line: Option<(Region, usize)> = None;
        let mut flush = |r: Region, a: usize, b: usize, last_line: &mut Option<(Region, usize)>| {
            bytes += (b - a) as u64;
            let (first, last) = (a / CACHE_LINE, (b - 1) / CACHE_LINE);
            let first = match *last_line {
                Some((lr, l)) if lr == r && l >= first => l + 1,
                _ => first,
            };
            if last >= first {
                lines += (last - first + 1) as u64;
            }
            // Merged ranges come sorted and disjoint, so `last` only grows within a region.
            *last_line = Some((r, last));
        };
        for &(r, a, b) in &self.reads {
            cur = match cur {
                Some((cr, ca, cb)) if cr == r && a <= cb => Some((cr, ca, cb.max(b))),
                Some((cr, ca, cb)) => {
                    flush(cr, ca, cb, &mut last_line);
                    Some((r, a, b))
                }
                None => Some((r, a, b)),
            };
        }
        if let Some((cr, ca, cb)) = cur {
            flush(cr, ca, cb, &mut last_line);
        }
        self.reads.clear();
        self.poses += 1;
        self.bytes += bytes;
        self.lines += lines;
        (bytes, lines)
    }

    /// Mean distinct bytes and cache lines per pose over every closed pose.
    pub(crate) fn per_pose(&self) -> (f64, f64) {
        let n = self.poses.max(1) as f64;
        (self.bytes as f64 / n, self.lines as f64 / n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_bytes_and_lines() {
        let mut c = Counter::default();
        c.read(Region::Clip, 0, 8);
        c.read(Region::Clip, 4, 8); // overlaps: 0..12
        c.read(Region::Clip, 60, 8); // 60..68: lines 0 and 1
        c.read(Region::Context, 0, 4); // another region: its own line 0
        assert_eq!(c.end_pose(), (12 + 8 + 4, 3));
        c.read(Region::Clip, 128, 1);
        assert_eq!(c.end_pose(), (1, 1));
        assert_eq!(c.per_pose(), (25.0 / 2.0, 2.0));
    }
}
