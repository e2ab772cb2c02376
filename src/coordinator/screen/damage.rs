//! Which rows of a session's screen changed when, so that each client fed screen updates gets
//! only the rows that changed since its own last update (a key's echo: one row).
//!
//! Every piece of output is a new generation; the emulator's damage (alacritty tracks it for
//! its renderer: a written cell damages its row; a scroll, a clear, the alternate screen
//! switched or a resize damage everything) is folded into a generation per row. A client that
//! last got generation `g` needs the rows newer than `g`, or everything when the whole screen
//! was damaged after `g`.

/// What a client needs to catch up.
#[derive(Debug, PartialEq, Eq)]
pub enum Changes {
    /// Nothing changed.
    None,
    /// These rows (0-based, top first).
    Rows(Vec<usize>),
    /// The whole screen.
    Full,
}

pub struct Damage {
    generation: u64,
    /// Generation of each row's last change.
    rows: Vec<u64>,
    /// Generation of the last change of the whole screen.
    full: u64,
}

impl Damage {
    pub fn new(rows: usize) -> Self {
        Self {
            generation: 1,
            rows: vec![1; rows],
            full: 1,
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Starts the generation of a new piece of output.
    pub fn next(&mut self) {
        self.generation += 1;
    }

    pub fn row(&mut self, row: usize) {
        if let Some(g) = self.rows.get_mut(row) {
            *g = self.generation;
        }
    }

    /// The whole screen changed, now with `rows` rows.
    pub fn full(&mut self, rows: usize) {
        self.rows.clear();
        self.rows.resize(rows, self.generation);
        self.full = self.generation;
    }

    /// How many rows changed since generation `since`; `None` when the whole screen did.
    /// (Asked on every piece of output: no allocation.)
    pub fn count_since(&self, since: u64) -> Option<usize> {
        (self.full <= since).then(|| self.rows.iter().filter(|&&g| g > since).count())
    }

    /// What a client that last got generation `since` needs.
    pub fn since(&self, since: u64) -> Changes {
        if self.full > since {
            return Changes::Full;
        }
        let rows: Vec<usize> = (0..self.rows.len())
            .filter(|&r| self.rows[r] > since)
            .collect();
        if rows.is_empty() {
            Changes::None
        } else {
            Changes::Rows(rows)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_the_rows_changed_after_its_last_update_or_everything() {
        let mut d = Damage::new(5);
        let start = d.generation();
        assert_eq!(d.since(start), Changes::None);
        d.next();
        d.row(2);
        let one = d.generation();
        d.next();
        d.row(4);
        d.row(9); // off the screen: ignored
        assert_eq!(d.since(start), Changes::Rows(vec![2, 4]));
        assert_eq!(d.since(one), Changes::Rows(vec![4]));
        assert_eq!(d.count_since(start), Some(2));
        assert_eq!(d.since(d.generation()), Changes::None);
        d.next();
        d.full(3);
        assert_eq!(d.since(one), Changes::Full);
        assert_eq!(d.count_since(one), None);
        assert_eq!(d.since(d.generation()), Changes::None);
        // A client that has never had anything gets everything.
        assert_eq!(Damage::new(2).since(0), Changes::Full);
    }
}
