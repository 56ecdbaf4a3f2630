//! Tests of the max-plus module: hand examples, errors, property tests
//! against brute force and the recurrence, and a large smoke test.

mod errors;
mod hand;
mod large;
mod props;
mod support;
