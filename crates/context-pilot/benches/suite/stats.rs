//! One measured figure: its samples, summarised as median, min and max.

use std::time::{Duration, Instant};

/// A row of the results table.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was measured, e.g. `callback overhead: blocking no-op`.
    pub figure: String,
    pub unit: &'static str,
    pub samples: Vec<f64>,
    /// Free text for the last column: the baseline comparison, the input size.
    pub note: String,
}

impl Row {
    pub fn new(figure: impl Into<String>, unit: &'static str, samples: Vec<f64>) -> Self {
        Self {
            figure: figure.into(),
            unit,
            samples,
            note: String::new(),
        }
    }

    #[must_use]
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }

    fn sorted(&self) -> Vec<f64> {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        s
    }

    pub fn median(&self) -> f64 {
        let s = self.sorted();
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => f64::midpoint(s[n / 2 - 1], s[n / 2]),
        }
    }

    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }

    /// `| figure | median | min | max | unit | runs | note |`
    pub fn markdown(&self) -> String {
        format!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            self.figure,
            fmt(self.median()),
            fmt(self.min()),
            fmt(self.max()),
            self.unit,
            self.samples.len(),
            self.note
        )
    }
}

/// Three significant digits or two decimals, whichever reads better.
pub fn fmt(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs `f` `rounds` times and returns each run's time in ms.
pub fn time_ms(rounds: usize, mut f: impl FnMut()) -> Vec<f64> {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            ms(t.elapsed())
        })
        .collect()
}
