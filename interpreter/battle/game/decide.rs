//! Decisions in a game: the policy that takes each, the options it
//! scores, and the decisions a battle plays its own way (charges with
//! their paths, placing units at deployment, retiring).

use super::*;

impl<'r> Game<'r> {
    pub(super) fn policy_of(&self, args: &[Value], params: &[(String, Ty)]) -> Option<usize> {
        let side = params
            .iter()
            .zip(args)
            .find_map(|((_, t), v)| match (t, v) {
                (Ty::Side, Value::Side(s)) => Some(*s),
                _ => None,
            })?;
        let army = self.side_of_army.iter().position(|s| *s == side)?;
        self.policy[army]
    }

    /// How the player moving unit `u` looks for its moves: as its army is
    /// told to ([`Prepared::search`]), else as the policy that scores the
    /// move (the deciding side's, else the unit's army's) says.
    pub(super) fn search_for(&self, prefer: Option<Prefer>, u: u16) -> Search {
        let army = self.army_of[u as usize];
        if let Some(s) = self.search.get(army).copied().flatten() {
            return s;
        }
        let policy = match prefer.and_then(|p| p.side_policy) {
            Some(p) => p,
            None => self.policy[army],
        };
        policy.map_or(Search::default(), |p| self.rs.policies[p].search)
    }

    /// Make decision `d` now, whatever the book of openings holds.
    pub(super) fn decide_afresh(&mut self, d: Id, args: &[Value]) -> Result<(), Diag> {
        let dec = &self.rs.decisions[d as usize];
        let Some(ch) = &dec.choice else {
            // A decision without a body (deployment from the scenario).
            return Ok(());
        };
        let prefer = self.prefer_for(d, ch, args);
        let slots = self.code.widths[d as usize].max(args.len() + 4);
        let mut frame = vec![Value::None; slots];
        frame[..args.len()].copy_from_slice(args);
        match ch.kind {
            ChoiceKind::Pick | ChoiceKind::Face => self.pick(ch, prefer, frame),
            ChoiceKind::Move => self.move_units(ch, prefer, frame),
            ChoiceKind::Charge => self.charges(d, ch, frame),
            ChoiceKind::Retire => self.retire(ch, prefer, frame),
            ChoiceKind::Place => self.place(ch, prefer, frame),
        }
    }

    /// Whose policy scores decision `d` (its choice `ch`) called with
    /// `args`: the deciding side's (a side parameter), else the army's of
    /// the unit being decided for (the option's first name).
    pub(super) fn prefer_for(&self, d: Id, ch: &ChoiceDef, args: &[Value]) -> Prefer {
        let dec = &self.rs.decisions[d as usize];
        let has_side = dec.params.iter().any(|(_, t)| *t == Ty::Side);
        Prefer {
            d,
            side_policy: has_side.then(|| self.policy_of(args, &dec.params)),
            var: ch.vars[0] as usize,
        }
    }

    pub(super) fn units_on_table(&self) -> Vec<u16> {
        (0..self.world.units.len() as u16)
            .filter(|u| self.field().on_table[*u as usize])
            .collect()
    }

    /// Whether the decision is answered by one army's policy (a `side`
    /// parameter chose it) that has no line for it, or by no policy at all:
    /// then every option scores 0.
    pub(super) fn policy_is_silent(&self, prefer: Prefer) -> bool {
        match prefer.side_policy {
            Some(p) => p.is_none_or(|p| self.rs.policies[p].prefer[prefer.d as usize].is_none()),
            None => false,
        }
    }

    #[inline(never)]
    pub(super) fn score(&self, prefer: Prefer, frame: &mut [Value]) -> Result<Value, Diag> {
        let policy = match prefer.side_policy {
            Some(p) => p,
            None => match frame[prefer.var] {
                Value::Unit(u) => self.policy[self.army_of[u as usize]],
                _ => None,
            },
        };
        match policy.and_then(|p| self.rs.policies[p].prefer[prefer.d as usize].as_ref()) {
            Some((e, _)) => self.eval(e, frame),
            None => Ok(Value::Int(0)),
        }
    }

    /// A decision's `then PROC(args)`: what taking an option does; units
    /// the procedure takes off the table leave it at once.
    pub(super) fn run_then(&mut self, ch: &ChoiceDef, frame: &mut [Value]) -> Result<(), Diag> {
        if let Some((p, args)) = &ch.then {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(self.eval(a, frame)?);
            }
            self.perform(*p, &vals)?;
            self.sync_off_table();
        }
        Ok(())
    }

    /// A decision's `check PROC(args) unless COND`: may unit `u` take the
    /// option? (The procedure runs, and its `passed` outcome says.)
    pub(super) fn passes_check(
        &mut self,
        ch: &ChoiceDef,
        u: u16,
        frame: &mut [Value],
    ) -> Result<bool, Diag> {
        let Some((p, args, unless)) = &ch.check else {
            return Ok(true);
        };
        if let Some(e) = unless {
            if self.eval(e, frame)?.as_bool() {
                return Ok(true);
            }
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.eval(a, frame)?);
        }
        let done = self.perform(*p, &vals)?;
        let i = self.rs.procedures[*p as usize]
            .outcomes
            .iter()
            .position(|o| o.name == "passed")
            .expect("checked by the compiler");
        if done.outcomes[i].as_bool() {
            return Ok(true);
        }
        // The name is copied only for a log kept (`note`).
        self.note(|g| Event::Stays {
            unit: g.world.units[u as usize].name.clone(),
            why: "failed its check".into(),
        });
        Ok(false)
    }

    /// Ask a decision of the ruleset by name now, with `args` (a step of
    /// play does this; tests use it to play one step of a figure).
    pub fn decide_named(&mut self, name: &str, args: &[Value]) -> Result<(), Diag> {
        let Some(d) = self.rs.decisions.iter().position(|d| d.name == name) else {
            return Err(Diag::new("muster::battle", format!("no decision `{name}`")));
        };
        // The caller may have changed the world itself.
        self.ev.forget();
        self.decide(d as Id, args)?;
        self.sync_off_table();
        Ok(())
    }

    /// Play the step of the sequence called `step` now, as a turn plays
    /// it: its hooks and every `do` of it, in order (tests use it to play
    /// a step of a figure without naming each of its actions).
    pub fn play_step_named(&mut self, step: &str) -> Result<(), Diag> {
        let graph = self.rs.graph.as_ref().expect("checked in Prepared::new");
        let Some(n) = graph.nodes.iter().find(|n| n.name == step) else {
            return Err(Diag::new("muster::battle", format!("no step `{step}`")));
        };
        // The caller may have changed the world itself.
        self.ev.forget();
        self.play_node(n)?;
        self.sync_off_table();
        Ok(())
    }

    /// A step's own play: its `before` hooks, its actions, its `after` hooks.
    /// A game whose log overflows stops after the part that filled it.
    pub(super) fn play_node(&mut self, n: &crate::compile::phase_graph::Node) -> Result<(), Diag> {
        self.step_hooks(&n.name, false, n.span)?;
        self.log_full(Some(n))?;
        for a in &n.actions {
            self.action(a, &n.name, n.span)?;
            self.log_full(Some(n))?;
        }
        self.step_hooks(&n.name, true, n.span)?;
        self.log_full(Some(n))
    }

    /// Run a procedure of the ruleset by name now, with `args`.
    pub fn perform_named(
        &mut self,
        name: &str,
        args: &[Value],
    ) -> Result<crate::run::procedures::Performed, Diag> {
        let Some(p) = self.rs.procedure(name) else {
            return Err(Diag::new(
                "muster::battle",
                format!("no procedure `{name}`"),
            ));
        };
        // The caller may have changed the world itself.
        self.ev.forget();
        let r = self.perform(p, args)?;
        self.sync_off_table();
        Ok(r)
    }

    /// `charge`: legal charges in the rules' order, each by the cheapest
    /// wheel-then-straight path into contact; two units charging each other
    /// meet half way.
    #[inline(never)]
    pub(super) fn charges(
        &mut self,
        d: Id,
        ch: &ChoiceDef,
        mut frame: Vec<Value>,
    ) -> Result<(), Diag> {
        let (c_slot, t_slot) = (ch.vars[0] as usize, ch.vars[1] as usize);
        let units = self.units_on_table();
        // The pairs LEGAL can hold of, when it needs a noted fact of them
        // (the rest are false, as LEGAL would find, unasked).
        let n = self.world.units.len();
        let noted = self.code.needs[d as usize].as_ref().map(|facts| {
            let mut pairs = vec![false; n * n];
            for &(f, swapped) in facts {
                for (key, v) in &self.world.facts[f as usize] {
                    if let ([Value::Unit(a), Value::Unit(b)], Value::Bool(true)) = (&key[..], v) {
                        let (c, t) = if swapped { (*b, *a) } else { (*a, *b) };
                        if let Some(p) = pairs.get_mut(c as usize * n + t as usize) {
                            *p = true;
                        }
                    }
                }
            }
            pairs
        });
        let mut list: Vec<(Value, u16, u16)> = Vec::new();
        for &c in &units {
            for &t in &units {
                if c == t
                    || noted
                        .as_ref()
                        .is_some_and(|p| !p[c as usize * n + t as usize])
                {
                    continue;
                }
                frame[c_slot] = Value::Unit(c);
                frame[t_slot] = Value::Unit(t);
                if self.eval(&ch.legal, &mut frame)?.as_bool() {
                    let order = match &ch.order {
                        Some(o) => self.eval(o, &mut frame)?,
                        None => Value::Int(0),
                    };
                    list.push((order, c, t));
                }
            }
        }
        list.sort_by(|a, b| a.0.sort_cmp(b.0));
        let mut moved: Vec<u16> = Vec::new();
        // Members of a group that has had its charge (made or not): they
        // are not offered one of their own (kept only with `together`).
        let mut held: Vec<u16> = Vec::new();
        for (_, c, t) in list.clone() {
            if moved.contains(&c)
                || held.contains(&c)
                || !self.field().on_table[c as usize]
                || !self.field().on_table[t as usize]
            {
                continue;
            }
            frame[c_slot] = Value::Unit(c);
            frame[t_slot] = Value::Unit(t);
            let reach =
                to_len(self.eval(ch.reach.as_ref().expect("compiler checked"), &mut frame)?)
                    .unwrap_or(0.0);
            let wheel = match &ch.wheel {
                Some(w) => to_len(self.eval(w, &mut frame)?).unwrap_or(0.0),
                None => 0.0,
            };
            let front = match &ch.frontal {
                Some(e) => self.eval(e, &mut frame)?.as_bool(),
                None => false,
            };
            if ch.together.is_some() {
                // Units that have charged already stay out of the group,
                // and so does the target.
                let mut skip = vec![false; self.world.units.len()];
                for m in &moved {
                    skip[*m as usize] = true;
                }
                let others = self.together_with(ch, c, Some(t), &skip, &mut frame)?;
                if !others.is_empty() {
                    held.extend(&others);
                    let mut group = vec![c];
                    group.extend(others);
                    let mutual = list.iter().any(|(_, a, b)| *a == t && group.contains(b))
                        && !moved.contains(&t);
                    // None: it could not reach, and nobody moved.
                    if let Some(then) = self.charge_group(&group, t, reach, wheel, front, mutual) {
                        moved.extend(&group);
                        if then {
                            self.run_then(ch, &mut frame)?;
                        }
                    }
                    continue;
                }
            }
            let f = self.field();
            let (cb, tb) = (f.bases[c as usize], f.bases[t as usize]);
            let name = self.world.units[c as usize].name.clone();
            let target = self.world.units[t as usize].name.clone();
            if cb.in_contact(&tb) {
                moved.push(c);
            } else {
                let obstacles: Vec<Base> = f
                    .bases
                    .iter()
                    .enumerate()
                    .filter(|(o, _)| f.on_table[*o] && *o != c as usize && *o != t as usize)
                    .map(|(_, b)| *b)
                    .collect();
                let Some(path) =
                    battlefield::charge_path_onto(&cb, &tb, reach, wheel, &obstacles, front)
                else {
                    self.note(|_| Event::Stays {
                        unit: name,
                        why: format!("cannot reach {target}"),
                    });
                    continue;
                };
                // Meeting half way: the target charges back and has not moved.
                let mutual = list.iter().any(|(_, a, b)| *a == t && *b == c) && !moved.contains(&t);
                let end = if mutual && path.wheel.abs() < 1e-9 {
                    cb.advanced(path.distance / 2.0)
                } else {
                    path.end
                };
                self.set_base(c as usize, end);
                moved.push(c);
                // A charge onto a friend (a TVBD commander's) joins it.
                let onto = if self.world.units[c as usize].side == self.world.units[t as usize].side
                {
                    format!("to join {target}")
                } else {
                    target
                };
                let how = if mutual && path.wheel.abs() < 1e-9 {
                    format!("charges {onto}, meeting half way")
                } else if path.wheel.abs() > 1e-9 {
                    format!("wheels {:+.0} and charges {onto}", path.wheel)
                } else {
                    format!("charges {onto}")
                };
                self.note(|_| Event::Move {
                    unit: name,
                    how,
                    from: place(&cb),
                    to: place(&end),
                    with: Vec::new(),
                });
                // A charge that stopped short (meeting half way: the target
                // comes the rest) still charged.
                if !end.in_contact(&tb) && !mutual {
                    continue;
                }
            }
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }

    /// `place`: deploy the units the scenario left unplaced, one at a time
    /// in the rules' order (`by`): each goes where the policy scores best
    /// among the points of a 1-unit grid over its army's half of the table
    /// where the base is wholly on the table, on no other unit, and LEGAL
    /// holds with the unit there. Units arriving during the battle (off the
    /// table with `off_table` false: a reserve or a unit a rule brought
    /// back) are placed the same way on the whole table; one with no such
    /// point goes back off the table.
    #[inline(never)]
    pub(super) fn place(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        mut frame: Vec<Value>,
    ) -> Result<(), Diag> {
        use std::cmp::Ordering::Greater;
        let u_slot = ch.vars[0] as usize;
        let mut todo: Vec<(Value, u16)> = Vec::new();
        for u in 0..self.world.units.len() as u16 {
            if !self.unplaced[u as usize] && !self.arriving(u as usize) {
                continue;
            }
            frame[u_slot] = Value::Unit(u);
            let order = match &ch.order {
                Some(o) => self.eval(o, &mut frame)?,
                None => Value::Int(0),
            };
            todo.push((order, u));
        }
        todo.sort_by(|a, b| a.0.sort_cmp(b.0));
        self.deployment_fits(&todo)?;
        let d = self.field().depth;
        // LEGAL's first part, when it reads nothing of where the unit
        // stands but how far it is from its own edge (`from_own_edge(u) +
        // base_depth(u) / 2 <= 9`): the same along a row of spots, so a row
        // it turns down is left at its first free spot.
        let mut next = frame.len() as u16;
        let mut parts = Vec::new();
        conjuncts(self.rs, &ch.legal, &mut next, &mut parts, 0);
        let by_row = parts
            .into_iter()
            .next()
            .filter(|p| same_along_a_row(self.rs, p, 0));
        frame.resize(frame.len().max(next as usize), Value::None);
        for (_, u) in todo {
            frame[u_slot] = Value::Unit(u);
            // Deployment looks at the army's half of the table; a unit
            // arriving during the battle at the whole of it.
            let arriving = !self.unplaced[u as usize];
            let waiting = self.field().bases[u as usize];
            let near_edge = self.field().edge[u as usize] < d / 2.0;
            let mut best: Option<(Value, Base)> = None;
            let (nx, ny) = self.spots_of(u);
            // On the table while its places are weighed (nothing between
            // two of them looks at it: the clash test passes it over).
            self.field_mut().set_on_table(u as usize, true);
            for j in 0..ny {
                let y = if near_edge {
                    0.5 + j as f64
                } else {
                    d - 0.5 - j as f64
                };
                let mut row_asked = by_row.is_none();
                for i in 0..nx {
                    let b = Base::new(
                        Pt {
                            x: 0.5 + i as f64,
                            y,
                        },
                        waiting.facing,
                        waiting.width,
                        waiting.depth,
                    );
                    if !self.on_table(&b) {
                        continue;
                    }
                    let f = self.field();
                    let clash = f
                        .bases
                        .iter()
                        .enumerate()
                        .any(|(o, ob)| o != u as usize && f.on_table[o] && b.overlaps(ob));
                    if clash {
                        continue;
                    }
                    self.set_base(u as usize, b);
                    if !row_asked {
                        row_asked = true;
                        let first = by_row.as_ref().expect("asked only when there is one");
                        // (Should it fail to evaluate, LEGAL reports it.)
                        if let Ok(false) = self.eval_raw(first, &mut frame).map(|v| v.as_bool()) {
                            break;
                        }
                    }
                    let legal = self.eval(&ch.legal, &mut frame);
                    let score = match legal {
                        Ok(l) if l.as_bool() => Some(self.score(prefer, &mut frame)),
                        Ok(_) => None,
                        Err(e) => Some(Err(e)),
                    };
                    if let Some(s) = score {
                        let s = match s {
                            Ok(s) => s,
                            Err(e) => {
                                self.field_mut().set_on_table(u as usize, false);
                                return Err(e);
                            }
                        };
                        if best
                            .as_ref()
                            .is_none_or(|(bs, _)| s.num_cmp(*bs) == Some(Greater))
                        {
                            best = Some((s, b));
                        }
                    }
                }
            }
            self.field_mut().set_on_table(u as usize, false);
            let unit = self.world.units[u as usize].name.clone();
            if arriving && best.is_none() {
                // Nowhere it may come on: it stays off the table.
                self.set_base(u as usize, waiting);
                if let Some(s) = self.off_table {
                    let ns = self.rs.states.len();
                    self.world.state[u as usize * ns + s as usize] = Value::Bool(true);
                    self.ev.changed(Change::State(s));
                }
                self.note(|_| Event::Stays {
                    unit,
                    why: "no place allowed to arrive at".into(),
                });
                continue;
            }
            let Some((_, b)) = best else {
                self.set_base(u as usize, waiting);
                return Err(Diag::new(
                    "muster::battle",
                    format!("unit `{unit}` cannot be deployed: no free place on its army's half of the table is allowed"),
                )
                .help("make the table bigger, give the scenario fewer units, or place some with `at`"));
            };
            self.set_base(u as usize, b);
            self.field_mut().set_on_table(u as usize, true);
            self.unplaced[u as usize] = false;
            self.field_mut().reserve[u as usize] = false;
            if arriving {
                self.note(|_| Event::Arrives {
                    unit,
                    at: place(&b),
                });
            } else {
                self.note(|_| Event::Placed {
                    unit,
                    at: place(&b),
                });
            }
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }

    /// The spots a `place` decision weighs for unit `u`, across and along
    /// the table: a measure apart, on its army's half of the table, or on
    /// the whole of it for a unit arriving during the battle.
    pub(super) fn spots_of(&self, u: u16) -> (i64, i64) {
        let (w, d) = (self.field().width, self.field().depth);
        let rows = if self.unplaced[u as usize] {
            d / 2.0
        } else {
            d
        };
        (w.floor() as i64, rows.floor() as i64)
    }

    /// Whether placing the units `todo` weighs no more than
    /// [`MAX_DEPLOYMENT_SPOTS`] spots; a diagnostic if it would weigh more
    /// (each spot asks the rules about the unit standing there).
    pub(super) fn deployment_fits(&self, todo: &[(Value, u16)]) -> Result<(), Diag> {
        let spots = todo.iter().fold(0i64, |sum, (_, u)| {
            let (nx, ny) = self.spots_of(*u);
            sum.saturating_add(nx.max(0).saturating_mul(ny.max(0)))
        });
        if spots <= MAX_DEPLOYMENT_SPOTS {
            return Ok(());
        }
        let f = self.field();
        Err(Diag::new(
            "muster::battle",
            format!(
                "placing {} units on a table of {} by {} weighs {spots} spots, more than the \
                 {MAX_DEPLOYMENT_SPOTS} one deployment may",
                todo.len(),
                f.width,
                f.depth
            ),
        )
        .help(
            "a `place` decision weighs, for each unit it puts down, every spot a measure apart \
             on its army's half of the table (the whole table for a unit arriving later): use a \
             smaller table, or place some units with `at` in the scenario",
        ))
    }

    /// A unit off the table that a rule brought back (its `off_table` set
    /// to false): the next `place` decision whose `where` allows puts it
    /// down.
    pub(super) fn arriving(&self, u: usize) -> bool {
        !self.field().on_table[u]
            && self
                .off_table
                .is_some_and(|s| !self.world.state[u * self.rs.states.len() + s as usize].as_bool())
    }

    /// A retire's turn in place before it goes back: to face the centre of
    /// the `away_from` unit (another unit on the table), then about with
    /// `turn_first`. The turned base (with, as `Some`, the unit turned
    /// away from, or `None` for a turn about) when some turn was made and
    /// the turned base stands on the table clear of every unit the retire
    /// may not pass; else the base as it stands and `None`.
    fn turned_first(
        &mut self,
        ch: &ChoiceDef,
        u: u16,
        stood: &Base,
        frame: &mut [Value],
    ) -> Result<(Base, Option<Option<u16>>), Diag> {
        let mut b = *stood;
        let mut away = None;
        if let Some(e) = &ch.away_from {
            if let Value::Unit(x) = self.eval(e, frame)? {
                if x != u && self.field().on_table[x as usize] {
                    let c = self.field().bases[x as usize].centre;
                    if c != stood.centre {
                        b = b.facing_to(battlefield::bearing(stood.centre, c));
                        away = Some(Some(x));
                    }
                }
            }
        }
        if let Some(e) = &ch.turn_first {
            if self.eval(e, frame)?.as_bool() {
                b = b.pivoted(180.0);
                away = away.or(Some(None));
            }
        }
        if away.is_none()
            || !self.on_table(&b)
            || !self.path_clear(ch, u, std::slice::from_ref(&b), frame)?
        {
            return Ok((*stood, None));
        }
        Ok((b, away))
    }

    /// `retire`: units go straight back `distance`, through friends where
    /// `through` allows, stopping short where the way is blocked (or, with
    /// `meeting e:`, in contact with an enemy in the way).
    #[inline(never)]
    pub(super) fn retire(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        mut frame: Vec<Value>,
    ) -> Result<(), Diag> {
        let u_slot = ch.vars[0] as usize;
        // Units that have had their turn, alone or with a group (kept only
        // with `together`).
        let mut had_turn = vec![false; self.world.units.len()];
        for u in self.units_on_table() {
            if had_turn[u as usize] {
                continue;
            }
            frame[u_slot] = Value::Unit(u);
            if let Some((e_slot, _)) = &ch.meeting {
                frame[*e_slot as usize] = Value::None;
            }
            if !self.eval(&ch.legal, &mut frame)?.as_bool() {
                continue;
            }
            let mut others = Vec::new();
            if ch.together.is_some() {
                others = self.together_with(ch, u, None, &had_turn, &mut frame)?;
                had_turn[u as usize] = true;
                for o in &others {
                    had_turn[*o as usize] = true;
                }
            }
            let must = match &ch.must {
                Some(m) => self.eval(m, &mut frame)?.as_bool(),
                None => false,
            };
            let score = self.score(prefer, &mut frame)?;
            if !must && score.num_cmp(Value::Int(0)) == Some(std::cmp::Ordering::Less) {
                continue;
            }
            if !must && !self.passes_check(ch, u, &mut frame)? {
                continue;
            }
            let d = to_len(self.eval(ch.distance.as_ref().expect("compiler checked"), &mut frame)?)
                .unwrap_or(0.0);
            let turn = match &ch.turn_about {
                Some(e) => self.eval(e, &mut frame)?.as_bool(),
                None => false,
            };
            if !others.is_empty() {
                self.retire_group(ch, u, &others, d, turn, &mut frame)?;
                self.run_then(ch, &mut frame)?;
                continue;
            }
            let stood = self.field().bases[u as usize];
            let (start, away) = self.turned_first(ch, u, &stood, &mut frame)?;
            let mut done = None;
            let mut met = None;
            if let Some((e_slot, cond)) = &ch.meeting {
                if let Some((e, gap)) =
                    self.enemy_behind(u, &start, d, *e_slot, cond, &mut frame)?
                {
                    let end = start.straight_end(-gap);
                    if gap <= 0.0
                        || (self.on_table(&end)
                            && self.path_clear(ch, u, &start.straight_path(-gap), &mut frame)?)
                    {
                        done = Some((gap.max(0.0), end));
                        met = Some(e);
                    } else {
                        frame[*e_slot as usize] = Value::None;
                    }
                }
            }
            if done.is_none() {
                for dist in moves::retreats(d, self.field().longest_move()) {
                    // An end off the table: not clear, and not laid.
                    let end = start.straight_end(-dist);
                    if !self.on_table(&end) {
                        continue;
                    }
                    if self.path_clear(ch, u, &start.straight_path(-dist), &mut frame)? {
                        done = Some((dist, end));
                        break;
                    }
                }
            }
            let passed = match done {
                Some((dist, _)) if dist > 0.0 => self
                    .gone_through(&[u], &[start.straight_path(-dist)])
                    .pop()
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            self.field_mut().retired(u, &passed);
            let unit = self.world.units[u as usize].name.clone();
            let turned = if turn { ", turning about" } else { "" };
            let into = match met {
                Some(e) => format!(" into {}", self.world.units[e as usize].name),
                None => String::new(),
            };
            // The way it went, when it turned first (`away_from`, `turn_first`).
            let way = match away {
                Some(Some(x)) => format!(" away from {}", self.world.units[x as usize].name),
                Some(None) => " to its front".to_string(),
                None => String::new(),
            };
            match done {
                Some((dist, end)) => {
                    // Turning about in place covers the same ground.
                    let end = if turn { end.pivoted(180.0) } else { end };
                    self.set_base(u as usize, end);
                    self.note(|_| Event::Move {
                        unit,
                        how: format!("falls back {dist:.1}{way}{into}{turned}"),
                        from: place(&stood),
                        to: place(&end),
                        with: Vec::new(),
                    });
                }
                // With no room, a unit that turned first ends turned about
                // from its turned facing: as a retire of none.
                None if turn => {
                    let end = start.pivoted(180.0);
                    self.set_base(u as usize, end);
                    self.note(|_| Event::Move {
                        unit,
                        how: "has no room to fall back, turning about".into(),
                        from: place(&stood),
                        to: place(&end),
                        with: Vec::new(),
                    });
                }
                None => self.note(|_| Event::Stays {
                    unit,
                    why: "no room to fall back".into(),
                }),
            }
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }
}
