//! Prompts in a battle: `alternate DECISION(ARGS) for each s in sides`
//! asks the sides a decision in turn, starting with the side `from` names
//! (else the first side), each time taking at most one option (the one the
//! rules and the policy put first, as a `pick` takes its first); a side
//! that takes none passes. It goes round until every side in a row has
//! passed: the coloured-dice QRS's "prompt actions until both sides pass"
//! (8.SP4.3). The narrative names the decision a side passed on
//! (`Swedish army passes (charge_prompts)`): a step may alternate several,
//! each closing with every side's pass. An option the `pay` clause refused (its hand lacked the
//! card) is not offered again in the same alternation: hands only shrink
//! while it lasts, unless a gift fills one, and then the option is asked
//! again at the next alternation.

use super::{Event, Game};
use crate::base::value::Value;
use crate::compile::ir::{Ex, Id};
use crate::compile::phase_graph::Repeat;
use crate::front::diagnostic::Diag;

/// The most times one `alternate` asks its decision (a rule whose option
/// can always be taken again, at no cost, never lets both sides pass).
pub const MAX_PROMPTS: usize = 10_000;

/// An alternation under way: which decision it asks, whether the side
/// asked last took an option, and the options refused so far.
#[derive(Clone, Debug)]
pub(super) struct Prompt {
    pub decision: Id,
    pub took: bool,
    pub refused: Vec<Vec<u16>>,
}

impl Game<'_> {
    /// `alternate DECISION(ARGS) for each s in sides [where COND] [from
    /// SIDE]`. A side the `where` leaves out passes without being asked.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn alternate(
        &mut self,
        decision: Id,
        args: &[Ex],
        each: &Repeat,
        from: Option<&Ex>,
        slots: u16,
        base: &[Value],
    ) -> Result<(), Diag> {
        let n = self.repetitions(Some(each));
        if n == 0 {
            return Ok(());
        }
        let start = match from {
            None => 0,
            Some(e) => {
                let mut frame = vec![Value::None; (slots as usize).max(base.len()).max(1)];
                frame[..base.len()].copy_from_slice(base);
                match self.eval(e, &mut frame)? {
                    Value::Side(s) => s as usize % n,
                    _ => 0,
                }
            }
        };
        let outer = self.prompt.replace(Prompt {
            decision,
            took: false,
            refused: Vec::new(),
        });
        let mut passes = 0;
        let mut asked = 0;
        let mut i = start;
        let done = loop {
            if passes >= n {
                break Ok(());
            }
            if asked == MAX_PROMPTS {
                break Err(Diag::new(
                    "muster::battle",
                    format!(
                        "`alternate {}` asked the sides {MAX_PROMPTS} times and they never all passed",
                        self.rs.decisions[decision as usize].name
                    ),
                )
                .help("each option taken must cost something or use something up (a card paid, a state set), so the sides run out of options"));
            }
            let side = i % n;
            i += 1;
            asked += 1;
            let Some(vals) = self.arguments(Some(each), side, slots, base, args)? else {
                passes += 1;
                continue;
            };
            if let Some(p) = &mut self.prompt {
                p.took = false;
            }
            if let Err(e) = self.decide(decision, &vals) {
                break Err(e);
            }
            self.sync_off_table();
            if self.prompt.as_ref().is_some_and(|p| p.took) {
                passes = 0;
            } else {
                passes += 1;
                self.note(|g| Event::Passes {
                    side: g.label(Value::Side(side as u16)),
                    prompt: g.rs.decisions[decision as usize].name.clone(),
                });
            }
        };
        self.prompt = outer;
        done
    }

    /// The options of decision `d` refused in the alternation under way
    /// (none outside one, or for another decision).
    pub(super) fn refused(&self, d: Id) -> Vec<Vec<u16>> {
        match &self.prompt {
            Some(p) if p.decision == d => p.refused.clone(),
            _ => Vec::new(),
        }
    }

    /// Whether a pick of decision `d` is asked by an alternation, and so
    /// takes one option at most.
    pub(super) fn prompted(&self, d: Id) -> bool {
        self.prompt.as_ref().is_some_and(|p| p.decision == d)
    }
}
