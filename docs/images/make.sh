#!/bin/sh
# Remake the pictures the README shows, from the repository's root:
#
#   sh docs/images/make.sh
#
# odds.svg and compare.svg are what the commands below write, byte for byte
# (tests/charts.rs checks that the committed files still are); battle.png
# is a screenshot of the battle page in headless Chromium (fonts differ
# between machines, so it is not compared). MUSTER names the program
# (default: a release build through cargo); CHROMIUM the browser.
set -eu
M=${MUSTER:-"cargo run --release --quiet --"}
B=${CHROMIUM:-chromium}
cd "$(dirname "$0")/../.."
$M odds rules/tillys_very_bad_day.muster \
  --situation rules/situations/tvbd_horse_charges_pike.toml \
  --svg docs/images/odds.svg > /dev/null
$M compare rules/tillys_very_bad_day.muster rules/tvbd_steady_pike.muster \
  --runs 1000 --quiet --svg docs/images/compare.svg > /dev/null
# The page goes to a folder of its own, removed with what it holds.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$M battle rules/tillys_very_bad_day.muster --seed 7 --html "$tmp/battle.html" > /dev/null
"$B" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1280,860 --screenshot=docs/images/battle.png \
  "file://$tmp/battle.html#turn=4" 2> /dev/null
