//! How a game's events read in the narrative `muster battle` prints.

use super::*;

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Turn { turn } => write!(f, "\n=== Turn {turn} ==="),
            Event::Step { phase, step } => match phase {
                Some(p) => write!(f, "-- {p} / {step}"),
                None => write!(f, "-- {step}"),
            },
            Event::Procedure {
                name,
                args,
                rolls,
                faces,
                modifiers,
                outcomes,
                log,
                sides,
            } => {
                write!(f, "   {name}({})", args.join(", "))?;
                if !modifiers.is_empty() {
                    write!(f, " [{}]", modifiers.join("; "))?;
                }
                if !faces.is_empty() {
                    write!(f, " rolls [{}]", faces.join(" "))?;
                } else if !rolls.is_empty() {
                    let r: Vec<String> = rolls.iter().map(|x| x.to_string()).collect();
                    write!(f, " rolls [{}]", r.join(" "))?;
                }
                let shown: Vec<String> = outcomes
                    .iter()
                    .filter(|(_, v)| v != "false" && v != "0" && v != "none" && v != "{}")
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect();
                if !shown.is_empty() {
                    write!(f, ": {}", shown.join(", "))?;
                }
                for l in log {
                    write!(f, "\n      > {l}")?;
                }
                for c in sides {
                    write!(f, "\n      {}: {} {} -> {}", c.side, c.state, c.from, c.to)?;
                }
                Ok(())
            }
            Event::Hook { name, rolls, log } => {
                write!(f, "   hook {name}")?;
                if !rolls.is_empty() {
                    let r: Vec<String> = rolls.iter().map(|x| x.to_string()).collect();
                    write!(f, " rolls [{}]", r.join(" "))?;
                }
                for l in log {
                    write!(f, "\n      > {l}")?;
                }
                Ok(())
            }
            Event::Move {
                unit,
                how,
                from,
                to,
                with,
            } => {
                write!(f, "   {unit} {how}")?;
                if !with.is_empty() {
                    let names: Vec<&str> = with.iter().map(|m| m.unit.as_str()).collect();
                    write!(f, " with {}", names.join(", "))?;
                }
                write!(
                    f,
                    ": ({:.1}, {:.1}) facing {:.0} -> ({:.1}, {:.1}) facing {:.0}",
                    from[0], from[1], from[2], to[0], to[1], to[2]
                )
            }
            Event::Stays { unit, why } => write!(f, "   {unit} stays: {why}"),
            Event::Leaves { unit } => write!(f, "   {unit} leaves the table"),
            Event::Arrives { unit, at } => write!(
                f,
                "   {unit} arrives at ({:.1}, {:.1}) facing {:.0}",
                at[0], at[1], at[2]
            ),
            Event::Placed { unit, at } => write!(
                f,
                "   {unit} deploys at ({:.1}, {:.1}) facing {:.0}",
                at[0], at[1], at[2]
            ),
            Event::Sides { army, side } => write!(f, "   {army} is the {side}"),
            Event::Shuffle { deck, cards } => write!(
                f,
                "   the {deck} deck is shuffled: {cards} card{}",
                if *cards == 1 { "" } else { "s" }
            ),
            Event::Card { deck, card, on } => match on {
                Some(on) => write!(f, "== {deck}: {card} ({on})"),
                None => write!(f, "== {deck}: {card}"),
            },
            Event::Unturned { deck, cards } => {
                write!(f, "   {deck}: left unturned: {}", cards.join(", "))
            }
            Event::Empty { deck } => write!(f, "   the {deck} deck is empty"),
            Event::Dealt {
                deck,
                to,
                cards,
                holds,
            } => write!(
                f,
                "   {to} is dealt {} ({deck}); holds {}",
                cards.join(", "),
                holds.join(", ")
            ),
            Event::Discarded {
                deck,
                from,
                cards,
                holds,
            } => {
                let holds = hand_text(holds);
                write!(
                    f,
                    "   {from} discards {} ({deck}); holds {holds}",
                    cards.join(", ")
                )
            }
            Event::Paid {
                deck,
                from,
                card,
                to,
                option,
            } => match to {
                Some(to) => write!(f, "   {from} gives {card} ({deck}) to {to}"),
                None => write!(
                    f,
                    "   {from} pays {card} ({deck}) for {}",
                    option.join(", ")
                ),
            },
            Event::Refused {
                deck,
                from,
                cost,
                option,
                holds,
            } => {
                let holds = hand_text(holds);
                write!(
                    f,
                    "   {} refused: {from} holds no {cost} or better ({deck}; holds {holds})",
                    option.join(", ")
                )
            }
            Event::Passes { side, prompt } => write!(f, "   {side} passes ({prompt})"),
            Event::End { turns, result } => {
                write!(f, "\n=== End after {turns} turns: {result} ===")
            }
        }
    }
}
