//! Recorded coordinator traces and their replay (trace conformance).
//!
//! An integration run logs each [`Event`] the Session Coordinator takes as one JSON line.
//! [`replay`] starts from an absent Domain and checks that every event is an enabled action
//! of the protocol model (the core mirrors `protocol/Lazaret.tla`) and that every state
//! reached satisfies the safety invariants. (Cirstea, Kuppe, Merz et al. 2024, "Validating
//! Traces of Distributed Programs Against TLA+ Specifications".)

use std::fmt;

use serde::{Deserialize, Serialize};

use super::core::{step, Rejected};
use super::event::Event;
use super::invariants;
use super::state::State;

/// A recorded sequence of coordinator events, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Trace {
    /// The events in the order they were taken.
    pub events: Vec<Event>,
}

/// A trace line that is not a valid event.
#[derive(Debug)]
pub struct TraceParseError {
    /// 1-based line number.
    pub line: usize,
    /// The JSON error.
    pub source: serde_json::Error,
}

impl fmt::Display for TraceParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace line {}: {}", self.line, self.source)
    }
}

impl std::error::Error for TraceParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl Trace {
    /// Parses JSON lines, one event per line; blank lines are skipped.
    pub fn from_jsonl(text: &str) -> Result<Self, TraceParseError> {
        let mut events = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let event = serde_json::from_str(line).map_err(|source| TraceParseError {
                line: i + 1,
                source,
            })?;
            events.push(event);
        }
        Ok(Self { events })
    }

    /// One JSON line for `event`, without the newline (what a recorder appends).
    pub fn line(event: &Event) -> Result<String, serde_json::Error> {
        serde_json::to_string(event)
    }

    /// The whole trace as JSON lines, each ending in a newline.
    pub fn to_jsonl(&self) -> Result<String, serde_json::Error> {
        let mut out = String::new();
        for event in &self.events {
            out.push_str(&Self::line(event)?);
            out.push('\n');
        }
        Ok(out)
    }
}

/// Why a trace does not conform to the protocol model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nonconformance {
    /// The event is not an enabled action in the state reached so far.
    NotEnabled(Rejected),
    /// The state reached violates the named safety invariant.
    Invariant(&'static str),
}

/// The first nonconforming step of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayError {
    /// 0-based index of the event in the trace.
    pub index: usize,
    /// The event.
    pub event: Event,
    /// What is wrong with it.
    pub cause: Nonconformance,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cause {
            Nonconformance::NotEnabled(rejected) => {
                write!(f, "trace event {}: {rejected}", self.index)
            }
            Nonconformance::Invariant(name) => write!(
                f,
                "trace event {} ({}) violates {name}",
                self.index,
                self.event.name()
            ),
        }
    }
}

impl std::error::Error for ReplayError {}

/// Replays `trace` from an absent Domain; returns the final state or the first step that is
/// not an enabled action or that breaks a safety invariant.
pub fn replay(trace: &Trace) -> Result<State, ReplayError> {
    let mut state = State::new();
    for (index, event) in trace.events.iter().enumerate() {
        let fail = |cause| ReplayError {
            index,
            event: *event,
            cause,
        };
        let (next, _effects) =
            step(&state, event).map_err(|r| fail(Nonconformance::NotEnabled(r)))?;
        if let Some(name) = invariants::violated(&next) {
            return Err(fail(Nonconformance::Invariant(name)));
        }
        state = next;
    }
    Ok(state)
}
