//! Outcomes a run left unset: the run-time half of the check-time
//! `muster::unset_outcome` warning. Where the compiler cannot see a gap
//! (a hook's script, a path through a decision), the odds can: an outcome
//! whose declared type lists no `none` but that read `none` in some of the
//! ways the procedure went was left unset there.

use crate::base::value::Value;
use crate::compile::ir::{Ruleset, Ty};
use crate::front::diagnostic::Diag;
use crate::run::odds::Odds;

/// A warning for each outcome of procedure `procedure` that read `none`
/// in `odds` while its type (named values) has no `none` among them. (A
/// number or truth value left unset reads 0 or false, as the check says.)
pub fn unset_outcomes(rs: &Ruleset, procedure: usize, odds: &Odds) -> Vec<Diag> {
    let Some(p) = rs.procedures.get(procedure) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for oc in &odds.outcomes {
        if !matches!(oc.ty, Ty::Symbols(_) | Ty::Enum(_)) {
            continue;
        }
        let Some((_, chance)) = oc
            .values
            .iter()
            .find(|(v, c)| *v == Value::None && !c.is_zero())
        else {
            continue;
        };
        let share = match chance.fraction() {
            Some((n, d)) => format!("{n}/{d} of the ways it went"),
            None => format!("{:.4} of the samples", chance.to_f64()),
        };
        found.push(
            Diag::new(
                "muster::unset_outcome",
                format!(
                    "procedure `{}` left its outcome `{}` unset in {share}: it read `none`",
                    p.name, oc.name
                ),
            )
            .at(p.span, "this procedure")
            .help(format!(
                "set `outcome {} = ...` on every path the procedure (and its hooks) can take; `muster check` warns where it can see the gap",
                oc.name
            ))
            .warning(),
        );
    }
    found
}
