//! Sans-IO coordinator core: follows protocol/tla/Lazaret.tla (in progress).
