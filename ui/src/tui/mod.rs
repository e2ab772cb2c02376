//! `lazaret tui`: the full-screen control centre (issue #7) — agent terminals as emulated panes,
//! with side panels for escalation approvals, Domain state and network denials.
pub mod alerts;
pub mod app;
mod app_activity;
mod app_copy;
mod app_ended;
mod app_input;
mod app_reattach;
mod app_requests;
mod app_sessions;
pub mod copy_mode;
pub mod denials_panel;
pub mod domain_end;
pub mod domain_view;
pub mod draw;
pub mod emulator;
pub mod emulator_alacritty;
pub mod emulator_vt100;
pub mod escalation_panel;
pub mod event;
pub mod frame_writer;
pub mod input;
pub mod keymap;
pub mod layout;
pub mod layout_hint;
pub mod links;
pub mod pane;
pub mod pane_history;
pub mod panels;
pub mod picker;
pub mod reattach;
pub mod run;
pub mod screen;
pub mod settings;
#[cfg(test)]
mod snapshot_tests;
pub mod terminal_input;
#[cfg(test)]
mod test_frame;
#[cfg(test)]
mod test_launcher;
pub mod theme;
