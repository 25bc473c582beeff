//! cp-mod-checkpoint
