//! cp-mod-console
