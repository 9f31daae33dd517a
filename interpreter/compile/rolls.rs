//! Pools of dice and the rolls that read them, compiled.
//!
//! A *pool* is dice not yet rolled: `2 red + white`, or a value of type
//! `dice` that a table or define returns (`combat_dice(advantage)`, a
//! shooting ladder). A *roll* (`roll POOL as EFFECTS(ARGS)`) rolls every die
//! of the pool at once and reads each face by an `effects` block, which
//! says what each face yields (`W2 => wounds 2, shoves 1`), some of it only
//! when a condition over the block's parameters holds (`wounds 1 when
//! flintlock`). A roll holds every tally the block names in one number,
//! [`TALLY_BITS`] a tally, its first tally highest: exact odds convolve it
//! and sampling adds it like any other number (so their joint distribution
//! is exact), and `r.wounds` reads one tally.
//!
//! What is checked here: each face an `effects` block names is a face of
//! some die, each tally it yields is one it declares, a condition reads only
//! the block's parameters (and their stats, types and qualities), a die
//! rolled by a block has some face the block reads, and a pool used as a
//! value has fixed dice.

use crate::base::value::Value;
use crate::compile::compiler::{Compiler, Def, Scope};
use crate::compile::ir::*;
use crate::front::diagnostic::Diag;
use crate::front::syntax::{self, BinOp, ExprKind, Item, ItemKind, Name, Span};

/// Pass 1, once dice, enums and stats are known: each `effects` block's
/// name, parameters and tallies (its rows compile later, see
/// [`effects_rows`]). Returns each block's id, in item order (`None` for
/// one that failed to declare).
pub(crate) fn declare_effects(c: &mut Compiler, items: &[Item]) -> Vec<Option<Id>> {
    let mut ids = Vec::new();
    for it in items {
        let ItemKind::Effects(e) = &it.kind else {
            continue;
        };
        ids.push(declare_one(c, e));
    }
    ids
}

fn declare_one(c: &mut Compiler, e: &syntax::Effects) -> Option<Id> {
    let params: Vec<(String, Ty)> = e
        .params
        .iter()
        .map(|p| (p.name.text.clone(), c.resolve_ty(&p.ty).unwrap_or(Ty::Int)))
        .collect();
    let mut tallies: Vec<String> = Vec::new();
    for t in &e.tallies {
        if tallies.contains(&t.text) {
            c.err(
                Diag::new(
                    "muster::effects",
                    format!("tally `{}` is named twice in `{}`", t.text, e.name.text),
                )
                .at(t.span, "named again here")
                .help("name each tally once between the braces after `->`"),
            );
            continue;
        }
        tallies.push(t.text.clone());
    }
    if tallies.len() > MAX_TALLIES {
        c.err(
            Diag::new(
                "muster::effects",
                format!(
                    "`{}` names {} tallies: a roll holds at most {MAX_TALLIES}",
                    e.name.text,
                    tallies.len()
                ),
            )
            .at(e.tallies[MAX_TALLIES].span, "one too many")
            .help("split the faces' effects over two `effects` blocks and roll the pool with each"),
        );
        return None;
    }
    let id = c.rs.effects.len() as Id;
    if !c.declare_name(&e.name, Def::Effects(id)) {
        return None;
    }
    c.rs.effects.push(EffectsDef {
        name: e.name.text.clone(),
        doc: e.doc.clone(),
        slots: params.len() as u16,
        params,
        tallies,
        rows: Vec::new(),
        fixed: None,
        span: e.name.span,
    });
    Some(id)
}

/// After unit types and qualities are known: what each face of each
/// `effects` block yields, and when. `ids` is [`declare_effects`]'s answer.
pub(crate) fn effects_rows(c: &mut Compiler, items: &[Item], ids: &[Option<Id>]) {
    let blocks = items.iter().filter_map(|it| match &it.kind {
        ItemKind::Effects(e) => Some(e),
        _ => None,
    });
    for (e, id) in blocks.zip(ids) {
        if let Some(id) = id {
            rows_of(c, e, *id);
        }
    }
}

fn rows_of(c: &mut Compiler, e: &syntax::Effects, id: Id) {
    let fx = c.rs.effects[id as usize].clone();
    let mut scope = Scope::new(false);
    for (n, t) in &fx.params {
        scope.bind(n, t.clone());
    }
    let faces: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for d in &c.rs.dice {
            for (f, _) in &d.faces {
                if !v.contains(f) {
                    v.push(f.clone());
                }
            }
        }
        v
    };
    let mut rows: Vec<(String, Vec<EffectYield>)> = Vec::new();
    for r in &e.rows {
        if !faces.contains(&r.face.text) {
            let sugg =
                crate::compile::compiler::suggest(&r.face.text, faces.iter().map(|s| s.as_str()));
            c.err(
                Diag::new(
                    "muster::unknown_name",
                    format!("no die has a face `{}`", r.face.text),
                )
                .at(r.face.span, "not a face of any die")
                .help(match sugg {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "name a face as a die declares it: `die red = { blank, S, W1 x2 }`"
                        .to_string(),
                }),
            );
            continue;
        }
        if rows.iter().any(|(f, _)| *f == r.face.text) {
            c.err(
                Diag::new(
                    "muster::effects",
                    format!("face `{}` is read twice in `{}`", r.face.text, fx.name),
                )
                .at(r.face.span, "read again here")
                .help("list everything one face yields on its one row, separated by commas"),
            );
            continue;
        }
        let mut yields = Vec::new();
        for (t, n, when) in &r.yields {
            let Some(k) = fx.tallies.iter().position(|x| *x == t.text) else {
                let sugg = crate::compile::compiler::suggest(
                    &t.text,
                    fx.tallies.iter().map(|s| s.as_str()),
                );
                c.err(
                    Diag::new(
                        "muster::unknown_name",
                        format!("`{}` yields no tally `{}`", fx.name, t.text),
                    )
                    .at(t.span, "not one of the block's tallies")
                    .help(match sugg {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!(
                            "the tallies are declared after `->`: {{ {} }}",
                            fx.tallies.join(", ")
                        ),
                    }),
                );
                continue;
            };
            if *n > MAX_TALLY {
                c.err(
                    Diag::new(
                        "muster::effects",
                        format!("a face yields {n} {}: at most {MAX_TALLY}", t.text),
                    )
                    .at(t.span, "too many")
                    .help("a roll counts at most 32,767 of one tally"),
                );
                continue;
            }
            let cond = match when {
                None => None,
                Some(w) => {
                    let (ce, ct) = match c.expr(w, &mut scope, Some(&Ty::Bool)) {
                        Some(x) => x,
                        None => continue,
                    };
                    c.expect(&ct, &Ty::Bool, w.span, "the condition of a face's yield");
                    if let Some(bad) = reads_more_than_params(&ce) {
                        c.err(
                            Diag::new(
                                "muster::effects",
                                format!("a face's condition reads {bad}"),
                            )
                            .at(w.span, "reads more than the block's parameters")
                            .help(format!(
                                "a condition reads only `{}`'s parameters (and their stats, types and qualities); pass anything else as an argument: `roll POOL as {}(...)`",
                                fx.name, fx.name
                            )),
                        );
                        continue;
                    }
                    Some(ce)
                }
            };
            yields.push(EffectYield {
                tally: k as u8,
                amount: *n,
                when: cond,
            });
        }
        rows.push((r.face.text.clone(), yields));
    }
    let def = &mut c.rs.effects[id as usize];
    def.slots = def.slots.max(scope.max);
    def.rows = rows;
    let conditional = def.rows.iter().flat_map(|r| &r.1).any(|y| y.when.is_some());
    if !conditional {
        let def = &c.rs.effects[id as usize];
        let fixed =
            c.rs.dice
                .iter()
                .map(|d| {
                    def.read_die(d, |_| Ok::<bool, ()>(true))
                        .expect("no condition to fail")
                })
                .collect();
        c.rs.effects[id as usize].fixed = Some(fixed);
    }
}

/// What a face's condition reads beyond the block's parameters, if it
/// does: facts, state, tables and the like change as play goes on, and a
/// roll's reading of its faces is fixed when the roll is compiled.
fn reads_more_than_params(e: &Ex) -> Option<&'static str> {
    let bad = match e {
        Ex::Const(_)
        | Ex::Local(_)
        | Ex::Option(_)
        | Ex::Stat(..)
        | Ex::IsType(..)
        | Ex::IsQuality(..)
        | Ex::IsSym(..)
        | Ex::Not(_)
        | Ex::Neg(_)
        | Ex::Bin(..)
        | Ex::If(..) => None,
        Ex::State(..) | Ex::SideState(..) => Some("a unit's or side's state"),
        Ex::Fact(..) => Some("a fact"),
        Ex::Define(..) | Ex::Table(..) | Ex::Quantity(..) => Some("a define, table or quantity"),
        _ => Some("something that changes as play goes on"),
    };
    if bad.is_some() {
        return bad;
    }
    let mut found = None;
    e.any_child(&mut |x| {
        found = reads_more_than_params(x);
        found.is_some()
    });
    found
}

/// A type this module adds: `dice`, or a roll read by an `effects` block
/// (named as the block).
pub(crate) fn named_ty(c: &Compiler, name: &str) -> Option<Ty> {
    match name {
        "dice" => Some(Ty::Dice),
        _ => match c.lookup_def(name) {
            Some(Def::Effects(e)) => Some(Ty::Tallies(e)),
            _ => None,
        },
    }
}

/// Is this the syntax of a pool (dice, a sum or multiple of pools, `none`),
/// to be compiled by [`pool_value`] where a value of type `dice` is wanted?
pub(crate) fn is_pool_syntax(c: &Compiler, sc: &Scope, e: &syntax::Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => {
            sc.lookup(&n.text).is_none() && matches!(c.lookup_def(&n.text), Some(Def::Die(_)))
        }
        ExprKind::Dice { .. } | ExprKind::None => true,
        ExprKind::Binary(BinOp::Add | BinOp::Mul, ..) => true,
        _ => false,
    }
}

/// One side of a pool's `*`: a number of times, or a pool.
enum Side {
    Count(Ex),
    Parts(Vec<RollPart>),
}

/// The parts of a pool (in a roll, or a value of type `dice`).
fn pool_parts(c: &mut Compiler, e: &syntax::Expr, sc: &mut Scope) -> Option<Vec<RollPart>> {
    let one = || Ex::Const(Value::Int(1));
    Some(match &e.kind {
        ExprKind::Name(n) if is_pool_syntax(c, sc, e) => {
            let Some(Def::Die(d)) = c.lookup_def(&n.text) else {
                unreachable!("is_pool_syntax checked it is a die")
            };
            vec![RollPart {
                count: one(),
                dice: PartDice::Die(d),
            }]
        }
        ExprKind::None => Vec::new(),
        ExprKind::Dice {
            count,
            die,
            scoring,
            counting,
            reroll,
        } => {
            if scoring.is_some() || !counting.is_empty() || reroll.is_some() {
                c.err(
                    Diag::new(
                        "muster::pool",
                        "a pool's dice are read by the `effects` of its roll",
                    )
                    .at(e.span, "`scoring`, `counting` or `rerolling` here")
                    .help("write the pool alone (`2 red + white`) and say how its faces read with `roll POOL as EFFECTS`"),
                );
                return None;
            }
            let (ce, ct) = c.expr(count, sc, None)?;
            c.expect(&ct, &Ty::Int, count.span, "the number of dice");
            let Some(Def::Die(d)) = c.lookup_def(&die.text) else {
                c.unknown(
                    die,
                    "die",
                    Some("declare it, e.g. `die red = { blank, S, W1 x2, W2 x2 }`".into()),
                );
                return None;
            };
            vec![RollPart {
                count: ce,
                dice: PartDice::Die(d),
            }]
        }
        ExprKind::Binary(BinOp::Add, a, b) => {
            let mut parts = pool_parts(c, a, sc)?;
            parts.extend(pool_parts(c, b, sc)?);
            parts
        }
        ExprKind::Binary(BinOp::Mul, a, b) => {
            let sa = side(c, a, sc)?;
            let sb = side(c, b, sc)?;
            match (sa, sb) {
                (Side::Count(n), Side::Parts(p)) | (Side::Parts(p), Side::Count(n)) => p
                    .into_iter()
                    .map(|x| RollPart {
                        count: times(x.count, n.clone()),
                        dice: x.dice,
                    })
                    .collect(),
                _ => {
                    c.err(
                        Diag::new("muster::pool", "a pool is multiplied by a number")
                            .at(e.span, "not a number times a pool")
                            .help("write `3 * combat_dice(x)` (or `3 red`); two pools are added with `+`"),
                    );
                    return None;
                }
            }
        }
        _ => {
            let (ex, ty) = c.expr(e, sc, Some(&Ty::Dice))?;
            if ty != Ty::Dice {
                let t = c.rs.ty_name(&ty);
                c.err(
                    Diag::new("muster::type", format!("expected dice, but this is {t}"))
                        .at(e.span, format!("this is {t}"))
                        .help("a pool is dice (`2 red + white`), or a table or define that returns `dice`"),
                );
                return None;
            }
            vec![RollPart {
                count: one(),
                dice: PartDice::Pool(ex),
            }]
        }
    })
}

/// One operand of `*` in a pool.
fn side(c: &mut Compiler, e: &syntax::Expr, sc: &mut Scope) -> Option<Side> {
    if is_pool_syntax(c, sc, e) {
        return pool_parts(c, e, sc).map(Side::Parts);
    }
    let (ex, ty) = c.expr(e, sc, None)?;
    Some(match ty {
        Ty::Dice => Side::Parts(vec![RollPart {
            count: Ex::Const(Value::Int(1)),
            dice: PartDice::Pool(ex),
        }]),
        _ => {
            c.expect(&ty, &Ty::Int, e.span, "the number of times a pool is taken");
            Side::Count(ex)
        }
    })
}

/// `a * b`, folded when both are numbers.
fn times(a: Ex, b: Ex) -> Ex {
    match (&a, &b) {
        (Ex::Const(Value::Int(x)), Ex::Const(Value::Int(y))) => match x.checked_mul(*y) {
            Some(v) => Ex::Const(Value::Int(v)),
            None => Ex::Bin(Bin::Mul, Box::new(a), Box::new(b)),
        },
        (Ex::Const(Value::Int(1)), _) => b,
        (_, Ex::Const(Value::Int(1))) => a,
        _ => Ex::Bin(Bin::Mul, Box::new(a), Box::new(b)),
    }
}

/// A pool where a value of type `dice` is wanted (a table's row, a define's
/// body): its dice must be fixed (a number of each die), and it becomes
/// one of the ruleset's pools.
pub(crate) fn pool_value(c: &mut Compiler, e: &syntax::Expr, sc: &mut Scope) -> Option<(Ex, Ty)> {
    let parts = pool_parts(c, e, sc)?;
    if let [RollPart {
        count: Ex::Const(Value::Int(1)),
        dice: PartDice::Pool(ex),
    }] = parts.as_slice()
    {
        return Some((ex.clone(), Ty::Dice));
    }
    let mut fixed: Vec<(Id, i64)> = Vec::new();
    for p in &parts {
        let Ex::Const(Value::Int(n)) = p.count else {
            return not_fixed(c, e.span);
        };
        match &p.dice {
            PartDice::Die(d) => fixed.push((*d, n)),
            PartDice::Pool(Ex::Const(Value::Pool(q))) => {
                for (d, k) in c.rs.pools[*q as usize].parts.clone() {
                    fixed.push((d, k.saturating_mul(n)));
                }
            }
            PartDice::Pool(_) => return not_fixed(c, e.span),
        }
    }
    let pool = merged(&fixed);
    let dice: i64 = pool.parts.iter().map(|p| p.1).sum();
    if dice > crate::compile::ir::MAX_POOL || fixed.iter().any(|p| p.1 < 0) {
        c.err(
            Diag::new(
                "muster::pool",
                format!(
                    "a pool of {dice} dice: a pool holds from 0 to {} dice",
                    crate::compile::ir::MAX_POOL
                ),
            )
            .at(e.span, "this pool")
            .help("check the counts of the pool's dice"),
        );
        return None;
    }
    Some((Ex::Const(Value::Pool(intern(c, pool))), Ty::Dice))
}

fn not_fixed(c: &mut Compiler, span: Span) -> Option<(Ex, Ty)> {
    c.err(
        Diag::new(
            "muster::pool",
            "a pool used as a value has a fixed number of each die",
        )
        .at(span, "a count or a pool that is only known in play")
        .help("roll such a pool where it is made (`roll me.files red as combat`), or pick among fixed pools with a table that returns `dice`"),
    );
    None
}

/// Each die once, in die order, without those counted 0.
fn merged(parts: &[(Id, i64)]) -> PoolDef {
    let mut out: Vec<(Id, i64)> = Vec::new();
    for (d, n) in parts {
        match out.iter_mut().find(|x| x.0 == *d) {
            Some(x) => x.1 += n,
            None => out.push((*d, *n)),
        }
    }
    out.retain(|x| x.1 != 0);
    out.sort_by_key(|x| x.0);
    PoolDef { parts: out }
}

/// The pool's id among the ruleset's pools (equal pools share one).
fn intern(c: &mut Compiler, p: PoolDef) -> u32 {
    if let Some(i) = c.rs.pools.iter().position(|x| *x == p) {
        return i as u32;
    }
    c.rs.pools.push(p);
    (c.rs.pools.len() - 1) as u32
}

/// `roll POOL as EFFECTS(ARGS)`.
pub(crate) fn roll(c: &mut Compiler, e: &syntax::Expr, sc: &mut Scope) -> Option<(Ex, Ty)> {
    let ExprKind::Roll {
        pool,
        effects,
        args,
    } = &e.kind
    else {
        unreachable!("called for a roll");
    };
    if !sc.rolls_dice() {
        c.err(
            Diag::new("muster::dice_outside_procedure", "dice can only be rolled inside a procedure")
                .at(e.span, "a roll here")
                .help("tables, defines and quantities describe facts; roll in a procedure and pass the result in (a table may return the `dice` to roll)"),
        );
        return None;
    }
    let Some(Def::Effects(fx)) = c.lookup_def(&effects.text) else {
        c.unknown(
            effects,
            "effects block",
            Some(
                "declare how the faces read: `effects combat -> { wounds } { W1 => wounds 1 }`"
                    .into(),
            ),
        );
        return None;
    };
    let params = c.rs.effects[fx as usize].params.clone();
    if args.len() != params.len() {
        c.err(
            Diag::new(
                "muster::arity",
                format!(
                    "`{}` takes {} argument(s), given {}",
                    effects.text,
                    params.len(),
                    args.len()
                ),
            )
            .at(effects.span, "here")
            .help(format!(
                "write `as {}({})`",
                effects.text,
                params
                    .iter()
                    .map(|p| p.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        );
        return None;
    }
    let mut arg_ex = Vec::new();
    for (a, (_, t)) in args.iter().zip(&params) {
        let (ae, at) = c.expr(a, sc, Some(t))?;
        c.expect(&at, t, a.span, "the argument");
        arg_ex.push(ae);
    }
    let parts = pool_parts(c, pool, sc)?;
    check_faces_read(c, fx, &parts, pool.span);
    Some((
        Ex::Roll(Box::new(Roll {
            parts,
            effects: fx,
            args: arg_ex,
            span: e.span,
        })),
        Ty::Tallies(fx),
    ))
}

/// A die rolled by an `effects` block that reads none of its faces is a
/// mistake (the wrong block, or a face misnamed).
fn check_faces_read(c: &mut Compiler, fx: Id, parts: &[RollPart], span: Span) {
    let mut dice: Vec<Id> = Vec::new();
    for p in parts {
        match &p.dice {
            PartDice::Die(d) => dice.push(*d),
            PartDice::Pool(Ex::Const(Value::Pool(q))) => {
                dice.extend(c.rs.pools[*q as usize].parts.iter().map(|x| x.0))
            }
            PartDice::Pool(_) => {}
        }
    }
    let def = &c.rs.effects[fx as usize];
    for d in dice {
        let die = &c.rs.dice[d as usize];
        if !die
            .faces
            .iter()
            .any(|(f, _)| def.rows.iter().any(|(r, _)| r == f))
        {
            let (dn, en) = (die.name.clone(), def.name.clone());
            let read: Vec<String> = def.rows.iter().map(|r| r.0.clone()).collect();
            c.err(
                Diag::new(
                    "muster::effects",
                    format!("`{en}` reads none of the faces of die `{dn}`"),
                )
                .at(span, format!("`{dn}` rolled here"))
                .help(format!(
                    "`{en}` reads the faces {}; roll dice that show them, or read them with another block",
                    read.join(", ")
                )),
            );
            return;
        }
    }
}

/// `r.NAME` on a roll read by `effects` block `fx`: one of its tallies.
pub(crate) fn tally_field(c: &mut Compiler, x: Ex, fx: Id, f: &Name) -> Option<(Ex, Ty)> {
    let def = &c.rs.effects[fx as usize];
    match def.tallies.iter().position(|t| *t == f.text) {
        Some(k) => Some((Ex::Tally(Box::new(x), fx, k as u8), Ty::Int)),
        None => {
            let sugg =
                crate::compile::compiler::suggest(&f.text, def.tallies.iter().map(|s| s.as_str()));
            let (name, all) = (def.name.clone(), def.tallies.join(", "));
            c.err(
                Diag::new(
                    "muster::unknown_name",
                    format!("a roll read as `{name}` has no tally `{}`", f.text),
                )
                .at(f.span, "no such tally")
                .help(match sugg {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("its tallies are: {all}"),
                }),
            );
            None
        }
    }
}
