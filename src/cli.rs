pub fn main() -> i32 {
    let e = crate::engine::Engine::new(crate::rules::builtin()).unwrap();
    for f in crate::rules::check(&e) { println!("{f}"); }
    0
}
