#[expect(
    dead_code,
    unused_imports,
    reason = "the agent loop that calls the providers is wired in on main"
)]
mod llm;

fn main() {}
