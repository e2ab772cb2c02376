//! What persists in a Domain, and resetting it (spec §3.7, FR-11, DX-6, SR-14, OR-5):
//! `lazaret state list | inspect | verify | reset`.
pub mod generations;
pub mod guard;
pub mod inspect;
pub mod listing;
pub mod ns;
pub mod remove;
pub mod report;
pub mod runner;
pub mod target;
pub mod unreadable;
