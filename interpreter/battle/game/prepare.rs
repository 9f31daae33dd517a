//! Setting up a scenario to play: units, sides, the field, the rules a
//! battle asks compiled once; then games started from it.

use super::*;

impl<'r> Prepared<'r> {
    /// Set up a scenario for a ruleset: units, sides, the field.
    pub fn new(rs: &'r Ruleset, sc: &Scenario) -> Result<Self, Vec<Diag>> {
        if rs.graph.is_none() {
            return Err(vec![needs(
                "it has no sequence of play",
                "write a `sequence { ... }`",
            )]);
        }
        let zone_syms = Field::zone_symbols(rs).ok_or_else(|| {
            vec![needs(
                "it has no `enum zone`",
                "add `import core` near the top of the ruleset",
            )]
        })?;
        let Some(m) = enum_syms(rs, "manoeuvre") else {
            return Err(vec![needs(
                "it has no `enum manoeuvre`",
                "add `import battle` near the top of the ruleset",
            )]);
        };
        let sym = |n: &str| m.iter().find(|x| x.0 == n).map_or(u32::MAX, |x| x.1);
        let manoeuvres = Manoeuvres {
            straight: sym("straight"),
            wheel: sym("wheel"),
            about_face: sym("about_face"),
            oblique: sym("oblique"),
            turn: sym("quarter_turn"),
            sideways: sym("sideways"),
            backwards: sym("backwards"),
            pivot: sym("pivot"),
            free: sym("free"),
            back_wheel: sym("back_wheel"),
        };
        if sc.armies.len() != 2 || rs.sides.len() != 2 {
            return Err(vec![needs(
                "a battle is fought by two armies on the ruleset's two sides",
                "declare `sides a, b` and give the scenario two armies",
            )]);
        }
        let mut world = World::new(rs);
        for (o, on) in &sc.options {
            world.options[*o as usize] = *on;
        }
        let mut army_of = Vec::new();
        let mut command_of = Vec::new();
        for (a, c, u) in sc.units() {
            world.add_unit(rs, &u.name, u.ty, u.quality, Some(a as u16));
            army_of.push(a);
            command_of.push(c);
        }
        world.init_state(rs).map_err(|d| vec![d])?;
        // Base sizes come from the ruleset.
        let size = |name: &str| {
            rs.tables
                .iter()
                .chain(rs.defines.iter())
                .find(|f| f.name == name)
        };
        let (Some(bw), Some(bd)) = (size("base_width"), size("base_depth")) else {
            return Err(vec![needs(
                "it does not say how big a unit's base is",
                "define `table base_width(u: unit) -> int` and `table base_depth(u: unit) -> int` (or defines), in the ruleset's measure",
            )]);
        };
        let ev = Eval::new(rs);
        let mut sizes = Vec::new();
        for u in 0..world.units.len() {
            let mut frame = vec![Value::Unit(u as u16); bw.slots.max(bd.slots).max(1) as usize];
            let w = ev
                .eval(Ctx::new(&world), &bw.body, &mut frame, &mut NoDice)
                .map_err(|e| vec![Diag::from(e)])?;
            frame.fill(Value::Unit(u as u16));
            let d = ev
                .eval(Ctx::new(&world), &bd.body, &mut frame, &mut NoDice)
                .map_err(|e| vec![Diag::from(e)])?;
            let (Some(w), Some(d)) = (to_len(w), to_len(d)) else {
                return Err(vec![needs(
                    "a base size is not a number",
                    "base_width and base_depth must give numbers for every unit type",
                )]);
            };
            sizes.push((w, d));
        }
        // Units made of files are as wide as their files.
        let file_widths = crate::run::field::files::widen(rs, &world, &mut sizes);
        let mut placed = Vec::new();
        for (i, (_, _, u)) in sc.units().enumerate() {
            placed.push(u.at.map(|p| Base::new(p, u.facing, sizes[i].0, sizes[i].1)));
        }
        // Reserves start off the table and are not deployed with the rest.
        let reserve: Vec<bool> = sc.units().map(|(_, _, u)| u.reserve).collect();
        let unplaced: Vec<bool> = placed
            .iter()
            .zip(&reserve)
            .map(|(p, r)| p.is_none() && !r)
            .collect();
        if let Some((_, (_, _, u))) = sc
            .units()
            .enumerate()
            .find(|(i, _)| unplaced[*i] || reserve[*i])
        {
            let deploys = rs.decisions.iter().any(|d| {
                d.choice
                    .as_ref()
                    .is_some_and(|c| c.kind == ChoiceKind::Place)
            });
            if !deploys {
                return Err(vec![if u.reserve {
                    Diag::new(
                        "muster::scenario",
                        format!("reserve `{}` could never arrive", u.name),
                    )
                    .at(u.span, "held in reserve")
                    .help("this ruleset has no `place u where ...` decision to bring a reserve onto the table: leave out `reserve`, and give the unit an `at`")
                } else {
                    Diag::new(
                        "muster::scenario",
                        format!("unit `{}` has no place on the table", u.name),
                    )
                    .at(u.span, "no `at`")
                    .help("this ruleset has no deployment decision (`place u where ...`): give every unit `at = [x, y]`")
                }]);
            }
        }
        let problems = sc.check_placement(&placed);
        if !problems.is_empty() {
            return Err(problems);
        }
        let terrain: Vec<Feature> = sc
            .terrain
            .iter()
            .map(|t| Feature {
                name: t.name.clone(),
                kind: match t.kind {
                    Value::Sym(s) => s,
                    _ => u32::MAX,
                },
                kind_name: t.kind_name.clone(),
                shape: t.shape.clone(),
            })
            .collect();
        world.field = Some(Box::new(Field::new(
            sc.width,
            sc.depth,
            Arc::new(terrain),
            placed
                .iter()
                .zip(sc.units())
                .enumerate()
                .map(|(i, (b, (_, _, u)))| {
                    // Waiting to be deployed: off the table until placed.
                    b.unwrap_or_else(|| {
                        Base::new(
                            Pt {
                                x: -1000.0,
                                y: -1000.0,
                            },
                            u.facing,
                            sizes[i].0,
                            sizes[i].1,
                        )
                    })
                })
                .collect(),
            army_of
                .iter()
                .map(|a| if *a == 0 { 0.0 } else { sc.depth })
                .collect(),
            army_of
                .iter()
                .zip(&command_of)
                .map(|(a, c)| (*a * 1000 + *c) as u16)
                .collect(),
            zone_syms,
        )));
        if let Some(fw) = file_widths {
            if let Some(mut f) = world.field.take() {
                f.keep_formations(rs, &world, fw);
                world.field = Some(f);
            }
        }
        if let Some(f) = world.field.as_mut() {
            for (i, u) in unplaced.iter().enumerate() {
                if *u || reserve[i] {
                    f.set_on_table(i, false);
                }
                f.reserve[i] = reserve[i];
            }
        }
        // A reserve is off the table as far as the rules are concerned too.
        if let Some(s) = rs.state("off_table") {
            let ns = rs.states.len();
            for (i, r) in reserve.iter().enumerate() {
                if *r {
                    world.state[i * ns + s as usize] = Value::Bool(true);
                }
            }
        }
        // Deployment rules the ruleset states.
        if let Some(f) = rs.defines.iter().find(|f| f.name == "legal_deployment") {
            let mut diags = Vec::new();
            for (i, (_, _, u)) in sc.units().enumerate() {
                if unplaced[i] || reserve[i] {
                    continue;
                }
                let mut frame = vec![Value::None; f.slots.max(1) as usize];
                frame[0] = Value::Unit(i as u16);
                let ok = ev
                    .eval(Ctx::new(&world), &f.body, &mut frame, &mut NoDice)
                    .map_err(|e| vec![Diag::from(e)])?;
                if !ok.as_bool() {
                    diags.push(
                        Diag::new(
                            "muster::scenario",
                            format!("unit `{}` is deployed where the rules do not allow", u.name),
                        )
                        .at(u.span, "breaks the ruleset's `legal_deployment`")
                        .note(f.span, "the ruleset's deployment rule")
                        .help("move the unit to where every part of the ruleset's `legal_deployment` holds"),
                    );
                }
            }
            if !diags.is_empty() {
                return Err(diags);
            }
        }
        let mut policy = Vec::new();
        for a in &sc.armies {
            policy.push(match &a.policy {
                Some((name, span)) => match rs.policies.iter().position(|p| &p.name == name) {
                    Some(i) => Some(i),
                    None => {
                        let sugg = crate::compile::compiler::suggest(
                            name,
                            rs.policies.iter().map(|p| p.name.as_str()),
                        );
                        return Err(vec![Diag::new(
                            "muster::scenario",
                            format!("unknown policy `{name}`"),
                        )
                        .at(*span, "not a policy of this ruleset")
                        .help(match sugg {
                            Some(s) => format!("did you mean \"{s}\"?"),
                            None => format!(
                                "the policies are: {}",
                                rs.policies
                                    .iter()
                                    .map(|p| p.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        })]);
                    }
                },
                None => rs.policies.iter().position(|p| p.name == "default"),
            });
        }
        let code = Arc::new(BattleCode::new(rs, world.units.len(), true));
        Ok(Prepared {
            rs,
            world,
            army_of,
            command_of,
            army_names: sc.armies.iter().map(|a| a.name.clone()).collect(),
            search: sc.armies.iter().map(|a| a.search).collect(),
            policy,
            turn_limit: sc.turn_limit,
            remember: true,
            unplaced,
            off_table: rs.state("off_table"),
            in_place_of: rs.state("in_place_of"),
            manoeuvres,
            code,
            openings: Some(Default::default()),
        })
    }

    /// Play with the expression tree walked, not compiled (a test plays
    /// both ways to show they are the same game).
    pub fn walking_the_tree(mut self) -> Self {
        self.code = Arc::new(BattleCode::new(self.rs, self.world.units.len(), false));
        // A book of its own: its games take nothing the compiled ones decided.
        self.openings = self.openings.as_ref().map(|_| Default::default());
        self
    }

    /// Play one game with a seed; with `log`, keep the narrative and a
    /// picture of the table after every turn. Without a log, the game
    /// takes the openings other games of this preparation left in its
    /// book, and leaves one (see [`openings`]): the same game, sooner.
    pub fn play(&self, seed: u64, log: bool) -> Result<Game<'r>, Diag> {
        match self.play_until_stopped(seed, log) {
            (g, None) => Ok(g),
            (_, Some(d)) => Err(d),
        }
    }

    /// [`Prepared::play`], but a game the rules stop (a broken
    /// requirement, a hook's error, a full log) is kept as far as it got,
    /// beside the diagnostic: its narrative shows how it came there.
    pub fn play_until_stopped(&self, seed: u64, log: bool) -> (Game<'r>, Option<Diag>) {
        let mut g = self.start(seed, log);
        g.openings = self.openings.clone();
        let stopped = g.run().err();
        (g, stopped)
    }

    /// A game set up and not yet begun (tests play single steps of it).
    pub fn start(&self, seed: u64, log: bool) -> Game<'r> {
        let mut g = self.fresh(seed, log);
        if log {
            g.ev.trace = Some(Default::default());
        }
        g
    }

    pub(super) fn fresh(&self, seed: u64, log: bool) -> Game<'r> {
        Game {
            rs: self.rs,
            ev: if self.remember {
                Eval::remembering(self.rs, self.world.units.len(), self.world.side_names.len())
            } else {
                Eval::new(self.rs)
            }
            .with_code(self.code.compiled.clone()),
            world: self.world.clone(),
            rng: Rng::new(seed),
            log: Vec::new(),
            logging: log,
            log_bytes: 0,
            log_overflow: None,
            turn: 0,
            army_of: self.army_of.clone(),
            side_of_army: vec![0, 1],
            policy: self.policy.clone(),
            search: self.search.clone(),
            move_stats: MoveStats::default(),
            turn_limit: self.turn_limit,
            off_table: self.off_table,
            in_place_of: self.in_place_of,
            m: self.manoeuvres,
            snapshots: Vec::new(),
            army_names: self.army_names.clone(),
            unplaced: self.unplaced.clone(),
            result: None,
            code: self.code.clone(),
            piles: vec![Default::default(); self.rs.decks.len()],
            hands: vec![Vec::new(); self.rs.decks.len()],
            prompt: None,
            drawing: 0,
            taping: Taping::Off,
            openings: None,
            in_opening: true,
            manoeuvres_known: Default::default(),
            scratch: Default::default(),
            moved_to: Vec::new(),
        }
    }

    /// Play one game and tape the rules' answers.
    pub fn play_taped(&self, seed: u64, log: bool) -> Result<(Game<'r>, Tape), Diag> {
        let mut g = self.start(seed, log);
        g.taping = Taping::Record(Default::default());
        g.run()?;
        let tape = match std::mem::replace(&mut g.taping, Taping::Off) {
            Taping::Record(t) => t.into_inner(),
            _ => unreachable!("taped from the start"),
        };
        Ok((g, tape))
    }

    /// Play one game again from its tape, with the seed it was taped with;
    /// a game that asks more than the tape holds, or something it answered
    /// with an error, fails.
    pub fn replay(&self, seed: u64, tape: Tape, log: bool) -> Result<Game<'r>, Diag> {
        let mut g = self.start(seed, log);
        g.taping = Taping::Play(tape, Default::default());
        g.run()?;
        Ok(g)
    }
}
