//! The control bytes both directions of the terminal are parsed for (ECMA-48): the sandbox's
//! output by the passthrough filter, the developer's input by the prompt's key decoder.

pub const ESC: u8 = 0x1b;
pub const BEL: u8 = 0x07;
pub const ENQ: u8 = 0x05;
pub const CAN: u8 = 0x18;
pub const SUB: u8 = 0x1a;
/// 8-bit C1 forms: CSI, SS3, OSC, ST and the string introducers DCS, SOS, OSC, PM, APC.
pub const C1_CSI: u8 = 0x9b;
pub const C1_SS3: u8 = 0x8f;
pub const C1_OSC: u8 = 0x9d;
pub const C1_ST: u8 = 0x9c;
pub const C1_DCS: u8 = 0x90;
pub const C1_STRINGS: [u8; 5] = [0x90, 0x98, C1_OSC, 0x9e, 0x9f];
