//! cp-mod-callback
