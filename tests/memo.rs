//! The battle memo (values of defines, pairs and odds remembered until
//! what they read changes) never changes a game: with the memo and
//! without it, the same seed plays the same battle in Thistle, Matchlocks
//! and Claims, every move weighed with the candidate laid and taken back.
//! (A memo that forgot per unit, for rules reading only their own units,
//! was measured and not kept: issue 33, stop 52's note.)

use muster::battle::game::Prepared;
use muster::front::diagnostic::render_plain;
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/");

fn same_with_and_without_the_memo(rules: &str, seeds: &[u64]) {
    let mut b = match muster::build(&Path::new(ROOT).join(rules)) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", render_plain(&d, &s)),
    };
    let sc = b.scenario(None).unwrap();
    let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
    for &seed in seeds {
        prep.remember = true;
        let with = prep.play(seed, true).unwrap().narrative();
        prep.remember = false;
        let without = prep.play(seed, true).unwrap().narrative();
        assert!(with.lines().count() > 50, "{rules} seed {seed} is a game");
        assert_eq!(with, without, "{rules} seed {seed}");
    }
}

#[test]
fn remembered_values_change_nothing_in_thistle() {
    same_with_and_without_the_memo("rules/thistle_lily_and_rose.muster", &[1, 2]);
}

#[test]
fn remembered_values_change_nothing_in_matchlocks() {
    same_with_and_without_the_memo("rules/never_mind_the_matchlocks.muster", &[1]);
}

#[test]
fn remembered_values_change_nothing_in_claims() {
    same_with_and_without_the_memo("rules/claims_and_colours.muster", &[1, 2]);
}
