# ruff: noqa: E501  (conversation text is data; long lines keep each utterance greppable)
"""Generate ``long_context.jsonl``: multi-turn goldens with long conversation histories.

Standard library only and deterministic (``random.Random(1341)``). Run from the repository root::

    python datasets/goldens/make_long_context.py

Two kinds of golden (SPEC §8.1 / §9):

* ``history-retention``: the user states a fact in one of the first two user turns of a 30 to 44 turn
  conversation kept short enough (under ``HR_MAX_CHARS`` characters of history) to fit an 8k-token
  context window together with the retrieved passages; the final question needs that fact.
* ``eviction``: a 100 to 130 turn conversation, far too long to keep whole, where the fact is stated
  in the last few turns; it must survive when older turns are evicted. Some of these also state an
  older, superseded value early on.

Filler turns are plausible exchanges about corpus topics, consistent with the corpus documents.
Every golden is checked so that its mustInclude patterns do not match any filler turn: the answer
can only come from the planted turn (or, for document facts, from the cited document).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

OUT = Path(__file__).resolve().parent / "long_context.jsonl"
SEED = 1341
HR_TURNS = (30, 44)
EV_TURNS = (100, 130)
HR_MAX_CHARS = 8000

# (question, short answer, extra detail used in the long eviction conversations)
FILLER = [
    (
        "How long should I boil creek water?",
        "Bring it to a rolling boil for 1 minute; above about 2,000 m (6,500 ft) boil it for 3 minutes.",
        "Let it cool in a clean, covered container, and pour it between two containers if it tastes flat.",
    ),
    (
        "Can I use any bleach to disinfect water?",
        "Only regular unscented chlorine bleach. Avoid scented, splash-less or colour-safe types.",
        "Check the concentration on the label, because the dose for 6% and 8.25% bleach differs slightly for larger volumes.",
    ),
    (
        "How long do I wait after adding bleach?",
        "Stir and wait at least 30 minutes. It should smell slightly of chlorine.",
        "If it doesn't, repeat the dose and wait another 15 minutes before using it.",
    ),
    (
        "Will a filter get rid of viruses?",
        "Most portable filters don't reliably remove viruses. Disinfect the filtered water or boil it.",
        "A filter with an absolute pore size of 1 micron or smaller does handle Giardia and Cryptosporidium.",
    ),
    (
        "Why not store water in old milk jugs?",
        "Milk proteins and sugars can't be fully cleaned out, so bacteria grow. Use food-grade containers.",
        "Clean two-litre soda bottles are a reasonable alternative if you sanitise them first.",
    ),
    (
        "Where should I keep stored water?",
        "Somewhere cool and dark, away from fuels and chemicals whose vapours can get through some plastics.",
        "Label each container with the date so you know when to rotate it.",
    ),
    (
        "How do I stop bleeding from a deep cut on the forearm?",
        "Press hard on the wound with a clean dressing and keep pressing; add more material on top if blood soaks through.",
        "If pressure can't control life-threatening bleeding from a limb, a tourniquet goes 2 to 3 inches above the wound.",
    ),
    (
        "What should I cool a burn with?",
        "Cool running water, not ice, for at least 10 minutes, then cover it loosely with cling film or a clean dressing.",
        "Keep the rest of the person warm while you cool the burn, especially with children.",
    ),
    (
        "What are the early signs of hypothermia?",
        "Shivering, clumsy hands, slurred speech and poor judgement: the 'umbles'.",
        "Get the person out of the wind, replace wet clothes with dry layers and warm the core first.",
    ),
    (
        "How do I tell heat exhaustion from heat stroke?",
        "Confusion or strange behaviour in someone who is overheated points to heat stroke, which is an emergency.",
        "Heat exhaustion usually brings heavy sweating and cool, clammy skin; treat any doubt as heat stroke.",
    ),
    (
        "How fast should CPR compressions be?",
        "100 to 120 per minute, at least 2 inches deep on an adult, letting the chest recoil fully.",
        "Swap compressors about every 2 minutes if someone else can take over.",
    ),
    (
        "What's the point of checking CSM on a splint?",
        "Circulation, sensation and movement beyond the injury tell you whether the splint is too tight.",
        "Check before splinting, right after, and every 15 minutes.",
    ),
    (
        "When does a dirty wound need a tetanus booster?",
        "If the last tetanus shot was more than 5 years ago; for clean minor wounds, more than 10 years.",
        "Soil, rust and animal saliva all count as dirty.",
    ),
    (
        "What goes into a basic IFAK?",
        "A tourniquet, hemostatic gauze, a pressure bandage, chest seals, gloves, shears and a marker.",
        "Keep the tourniquet where either hand can reach it.",
    ),
    (
        "Is pressure canning really necessary for vegetables?",
        "Yes. Low-acid foods like green beans and corn must be pressure canned to destroy botulinum spores.",
        "Only a pressure canner reaches 240 °F (116 °C); a water bath never gets above boiling.",
    ),
    (
        "How do I know my canning jars sealed?",
        "After 12 to 24 hours the lid should be concave and not flex when pressed.",
        "Refrigerate and use any jar that didn't seal.",
    ),
    (
        "What temperature do I dry apple slices at?",
        "About 140 °F (60 °C) in a dehydrator.",
        "Dip light-coloured fruit in an ascorbic acid solution first to stop browning.",
    ),
    (
        "How do I keep my pantry rotated?",
        "First in, first out: date everything, put new items at the back, take from the front.",
        "Eating what you store keeps the rotation going without extra effort.",
    ),
    (
        "Do I need oxygen absorbers for sugar?",
        "No. Sugar doesn't need them, and with an absorber it turns into a brick.",
        "Salt doesn't need them either.",
    ),
    (
        "How long do MREs keep?",
        "About 3 years at 80 °F, but only around 6 months at 100 °F. Heat is the enemy.",
        "That's why attics and hot garages are poor places for food storage.",
    ),
    (
        "Which radio licence should I get for my family?",
        "GMRS needs no exam and covers your immediate family; ham radio needs an exam but gives far more options.",
        "FRS radios need no licence at all, but their power and range are limited.",
    ),
    (
        "How far will FRS radios reach?",
        "Often only a mile or two among buildings or trees; more from hilltop to hilltop.",
        "The big range numbers on the package assume perfect line of sight.",
    ),
    (
        "Do privacy codes make my radio private?",
        "No. CTCSS tones only stop you hearing other users; anyone on the channel can still hear you.",
        "Radios from different brands work together as long as channel and tone settings match.",
    ),
    (
        "What's the 2-metre band?",
        "144 to 148 MHz in the US, where most local repeaters and handhelds operate.",
        "The name comes from the wavelength, which is about two metres at those frequencies.",
    ),
    (
        "Why is my handheld's range so poor?",
        "The stock rubber duck antenna is inefficient. A longer whip or an external antenna helps a lot.",
        "Hold the radio upright and get higher: at VHF, height matters more than power.",
    ),
    (
        "What's a good SWR?",
        "Below 1.5:1 is excellent; up to 2:1 is acceptable for most modern radios.",
        "High SWR usually means the wrong length, a bad connector or water in the coax.",
    ),
    (
        "Does coax type matter at VHF?",
        "Yes. Thin cable like RG-58 loses a lot at 2 metres; low-loss cable keeps much more of your power.",
        "Every 3 dB of loss halves the power reaching the antenna.",
    ),
    (
        "What is a directed net?",
        "A net where net control runs the frequency and stations transmit only when called.",
        "Emergency nets are almost always directed so traffic doesn't collide.",
    ),
    (
        "How do I spell my call sign on the air?",
        "Use the phonetic alphabet: Alfa, Bravo, Charlie and so on, especially for the suffix.",
        "Say numbers digit by digit, and many operators say 'niner' for 9.",
    ),
    (
        "What does 'over' mean?",
        "That you've finished your transmission and expect a reply.",
        "'Out' means the conversation is over, so 'over and out' contradicts itself.",
    ),
    (
        "How do I size a solar panel array?",
        "Divide your daily watt-hours by peak sun hours and by about 0.75 for system losses.",
        "Size for the worst month in which you need the system, because winter sun can be half of summer's.",
    ),
    (
        "MPPT or PWM controller?",
        "MPPT costs more but typically harvests 10 to 30% more energy, especially in cold weather.",
        "PWM needs panel voltage matched to the battery; excess voltage is wasted.",
    ),
    (
        "How deep can I discharge lead-acid batteries?",
        "About 50% for a long life, and recharge promptly after use.",
        "Leaving them partly discharged causes sulphation and permanent capacity loss.",
    ),
    (
        "Are lithium iron phosphate batteries worth it?",
        "They weigh about half as much for the same usable energy and last thousands of cycles.",
        "Don't charge them below freezing unless the battery has built-in heating.",
    ),
    (
        "Where do I put the generator during an outage?",
        "Outdoors, at least 20 feet from the house, exhaust pointing away from doors and windows.",
        "Never in the garage or basement, even with doors open: carbon monoxide builds up fast.",
    ),
    (
        "Can I plug the generator into the dryer outlet?",
        "No. Backfeeding can electrocute utility workers. Use a transfer switch installed by an electrician.",
        "Otherwise, run appliances on heavy-duty outdoor-rated extension cords.",
    ),
    (
        "What's the rule of threes?",
        "Roughly 3 minutes without air, 3 hours without shelter in harsh weather, 3 days without water, 3 weeks without food.",
        "In bad weather that makes shelter the first priority.",
    ),
    (
        "Where shouldn't I pitch a tarp?",
        "Under dead branches, in hollows where cold air pools, or in dry washes that can flash flood.",
        "Face the opening away from the prevailing wind.",
    ),
    (
        "Why does my sleeping pad matter so much?",
        "Your bag's insulation is crushed underneath you, so the pad does most of the work against the cold ground.",
        "R-values of stacked pads add together.",
    ),
    (
        "Should I trust the extreme rating on a sleeping bag?",
        "No. It's a survival-only figure. Choose by the comfort rating.",
        "The limit rating assumes a warm sleeper curled up.",
    ),
    (
        "How do I take a bearing from a map?",
        "Line up the baseplate edge from you to the target, turn the bezel so the orienting lines match map north, then read the index.",
        "Then correct for declination and put red in the shed to walk it.",
    ),
    (
        "What is a back bearing?",
        "The reverse direction: add 180 degrees if the bearing is under 180, otherwise subtract 180.",
        "Back bearings are how you plot your position from landmarks.",
    ),
    (
        "How do I count paces?",
        "Count each time the same foot hits the ground, and measure your own count over a known 100 metres.",
        "Expect more paces uphill, in snow or in thick brush.",
    ),
    (
        "What's a handrail in navigation?",
        "A linear feature you can follow, like a stream, ridge, trail or power line.",
        "A catching feature beyond the target tells you that you've gone too far.",
    ),
    (
        "Why keep the compass away from my phone?",
        "Metal and electronics deflect the needle and give false bearings.",
        "Knives, radios and car bodies do the same.",
    ),
    (
        "What goes in a bug out bag?",
        "Water and a way to treat more, compact food, shelter, light, a radio, first aid, tools, maps and copies of documents.",
        "Carry cash in small bills too; card machines fail without power.",
    ),
    (
        "How often should I check my go bag?",
        "Twice a year is a good rhythm, for example when the clocks change.",
        "Rotate food and water, replace batteries and swap clothes for the season.",
    ),
    (
        "What should I keep in the car for winter?",
        "A scraper, a small shovel, sand or cat litter for traction, warm layers and a blanket.",
        "Keep the tank at least half full.",
    ),
    (
        "Is it safe to drive through a flooded road?",
        "No. Turn around, don't drown: moving water a foot deep can carry away most cars.",
        "You can't see a washed-out road under floodwater.",
    ),
    (
        "How do I set up an emergency toilet?",
        "Line the bowl or a bucket with heavy bags and add sawdust, peat or cat litter after each use.",
        "Double-bag and store full bags in a covered bin away from living areas.",
    ),
    (
        "How deep should a cathole be?",
        "6 to 8 inches deep, at least 200 feet from water, camp and trails.",
        "Cover it afterwards.",
    ),
    (
        "Does hand sanitiser work as well as soap?",
        "Not quite. Use at least 60% alcohol, and wash with soap and water whenever you can.",
        "Sanitiser struggles with visibly dirty hands and with germs like norovirus.",
    ),
    (
        "What does a falling barometer mean?",
        "Usually deteriorating weather as a low approaches; a fast fall warns of wind and storms.",
        "Rising pressure usually means improving weather.",
    ),
    (
        "Is it safe to keep hiking if I hear distant thunder?",
        "No. If you can hear thunder you can be struck. Get to a building or a hard-topped car.",
        "Wait 30 minutes after the last thunder before heading back out.",
    ),
    (
        "Why buy a NOAA weather radio?",
        "It alarms for warnings even when the power and phone networks are down and can wake you at night.",
        "Program your county's SAME code so it only alerts for your area.",
    ),
    (
        "What's the difference between a watch and a warning?",
        "A watch means conditions are favourable; a warning means it's happening or about to.",
        "Act immediately on a warning.",
    ),
    (
        "How do I keep my axe safe to use?",
        "Keep it sharp, the head tight, and chop on a block with nobody inside your swing circle.",
        "Sheathe it when you're not using it.",
    ),
    (
        "What angle should I sharpen my pocket knife to?",
        "About 20 degrees per side for a tough outdoor edge; 15 for a fine slicing edge.",
        "Raise a burr along the whole edge before switching sides.",
    ),
    (
        "What's the best tinder?",
        "Birch bark, fatwood shavings, dry grass, or cotton balls with petroleum jelly.",
        "Gather about twice as much tinder and kindling as you think you need.",
    ),
    (
        "How do I use a ferro rod?",
        "Hold the striker still just above the tinder and pull the rod back toward you.",
        "That way you don't knock the tinder bundle apart.",
    ),
    (
        "How do I put a campfire out properly?",
        "Drown it, stir the ashes, drown it again, and feel for heat with the back of your hand.",
        "If it's too hot to touch, it's too hot to leave.",
    ),
    (
        "Should I bury my campfire?",
        "No. Buried coals can smoulder for hours and reignite.",
        "Use plenty of water, or dirt only while stirring, never just to cover it.",
    ),
    (
        "How much water should we store per person?",
        "At least a gallon per person per day: 3 days for evacuation, 2 weeks at home if you can.",
        "More for nursing mothers, sick people and hot climates.",
    ),
    (
        "Is boiling enough for floodwater that smells of fuel?",
        "No. Boiling doesn't remove chemicals. Find another source.",
        "It can even concentrate contaminants as water evaporates.",
    ),
]

# Situations and general tips that pad the long (eviction) conversations to a realistic length.
CONTEXTS = [
    "We're getting the cabin ready this weekend and I'm working through my checklist.",
    "My neighbour and I are putting together a preparedness plan for our street.",
    "I'm teaching a short class at the community centre next month and want to get this right.",
    "The power went out twice last winter, so I'm finally taking this seriously.",
    "My brother-in-law keeps telling me different things, so I'd like to double-check.",
    "We're planning a week-long canoe trip in the autumn.",
    "I've been reading old forum threads and they contradict each other.",
    "Our scout troop is doing a preparedness badge and the kids keep asking me.",
    "I'm reorganising the garage shelves where all our emergency stuff lives.",
    "Storm season is coming and I want the household ready before it starts.",
]
TIPS = [
    "Write the key steps on a card and keep it with the gear, because nobody remembers details under stress.",
    "Practise it once in calm conditions; the first time should not be during a real emergency.",
    "It's worth walking the whole family through it so everyone knows the plan, not just you.",
    "Check the manufacturer's instructions for your specific model, since details vary between products.",
    "Keep a small logbook of what you did and when; it helps you spot problems and rotate supplies.",
    "Set a reminder on the calendar so maintenance happens even when life gets busy.",
    "Store the supplies where you can reach them in the dark, and keep a light nearby.",
    "A short course with hands-on practice is worth more than hours of reading.",
    "Think about who in your household might need extra help, such as small children or older relatives.",
    "Keep a paper copy of important information; phones run flat at the worst possible moment.",
    "If something seems off, stop and reassess rather than pushing on.",
    "Local authorities often publish guidance tailored to your area, so check what they recommend too.",
    "Label everything clearly with contents and dates; future you will be grateful.",
    "Start small and build up over time rather than trying to buy everything at once.",
    "Share your plan with a friend or relative outside the area who can act as a contact point.",
    "Review the plan after any real event and note what worked and what didn't.",
]


def filler_pairs(rng: random.Random, n_pairs: int, long: bool, forbid: list[re.Pattern]) -> list[tuple]:
    """Pick n_pairs distinct filler exchanges whose text matches none of the forbidden patterns."""
    pool = [p for p in FILLER if not any(f.search(" ".join(p)) for f in forbid)]
    contexts = [c for c in CONTEXTS if not any(f.search(c) for f in forbid)]
    tips = [t for t in TIPS if not any(f.search(t) for f in forbid)]
    out = []
    while len(out) < n_pairs:
        batch = pool[:]
        rng.shuffle(batch)
        out.extend(batch)
    pairs = []
    for q, a, extra in out[:n_pairs]:
        if long:
            lead = rng.choice(["", "Another one. ", "Next question. ", "Quick one. ", "Also, "])
            user = f"{rng.choice(contexts)} {lead}{q}"
            tip1, tip2 = rng.sample(tips, 2)
            pairs.append((user, f"{a} {extra} {tip1} {tip2}"))
        else:
            pairs.append((q, a))
    return pairs


def as_turns(pairs: list[tuple]) -> list[dict]:
    turns = []
    for u, a in pairs:
        turns.append({"role": "user", "content": u})
        turns.append({"role": "assistant", "content": a})
    return turns


def history_retention(rng, gid, doc, plant_user, plant_ack, query, inc, tags, early_index):
    """Fact planted in user turn `early_index` (0 or 1, counted in pairs) of a short conversation."""
    n_turns = rng.randrange(HR_TURNS[0], HR_TURNS[1] + 1, 2)
    forbid = [re.compile(p, re.I) for p in inc]
    while True:
        pairs = filler_pairs(rng, n_turns // 2 - 1, long=False, forbid=forbid)
        pairs.insert(early_index, (plant_user, plant_ack))
        turns = as_turns(pairs)
        if sum(len(t["content"]) for t in turns) <= HR_MAX_CHARS:
            break
        n_turns -= 2
    return golden(gid, query, turns, doc, inc, ["long-context", "history-retention", *tags])


def eviction(rng, gid, doc, plant_user, plant_ack, query, inc, tags, stale=None):
    """Fact planted in the last few turns of a very long conversation; optional stale fact early."""
    n_turns = rng.randrange(EV_TURNS[0], EV_TURNS[1] + 1, 2)
    forbid = [re.compile(p, re.I) for p in inc]
    if stale:
        forbid.append(re.compile(re.escape(stale[0]), re.I))
    pairs = filler_pairs(rng, n_turns // 2 - 1 - (1 if stale else 0), long=True, forbid=forbid)
    if stale:
        pairs.insert(rng.randrange(0, 3), stale)
    tail = rng.choice([0, 1])  # the fact is in the last pair, or the one before it
    pairs.insert(len(pairs) - tail, (plant_user, plant_ack))
    return golden(gid, query, as_turns(pairs), doc, inc, ["long-context", "eviction", *tags])


def golden(gid, query, turns, doc, inc, tags):
    return {
        "id": gid,
        "query": query,
        "turns": turns,
        "relevantDocIds": [doc],
        "mustInclude": inc,
        "mustNotInclude": [],
        "expectRefusal": False,
        "tags": tags,
    }


def build() -> list[dict]:
    rng = random.Random(SEED)
    NU = "numeric"
    g = []
    # ---- history retention: fact stated early, conversation fits an 8k window
    g.append(
        history_retention(
            rng,
            "lc-hr-gmrs-callsign",
            "radio-gmrs-frs",
            "Before we start: my GMRS call sign is WRKZ482 and I run a base station for the family.",
            "Got it. With a base station and an external antenna you'll have far better range than handhelds.",
            "What was my GMRS call sign again? I need it for tonight's check-in.",
            [r"WRKZ ?482"],
            [],
            early_index=0,
        )
    )
    g.append(
        history_retention(
            rng,
            "lc-hr-tank-size",
            "water-storage",
            "Some context: our rainwater tank holds 275 litres and there are four of us.",
            "Thanks. That's a useful reserve; treat rainwater before drinking it.",
            "What size did I say our tank was, and how long would it last the four of us at the recommended daily amount?",
            [r"\b275\b"],
            [NU],
            early_index=0,
        )
    )
    g.append(
        history_retention(
            rng,
            "lc-hr-altitude",
            "water-purification-boiling",
            "For context, our cabin sits at about 2,300 metres elevation.",
            "Noted. Altitude changes a few things, like cooking times and how water boils.",
            "So for water at the cabin, how long should we keep it boiling?",
            [r"3 minutes|three minutes"],
            [NU],
            early_index=1,
        )
    )
    g.append(
        history_retention(
            rng,
            "lc-hr-battery-bank",
            "power-batteries",
            "My setup: a 4,800 Wh lithium iron phosphate battery bank charged by solar.",
            "A nice size. LiFePO4 tolerates deep discharge well.",
            "Remind me how big I said my battery bank is, and how much of it I can use routinely.",
            [r"4,?800"],
            [NU],
            early_index=0,
        )
    )
    g.append(
        history_retention(
            rng,
            "lc-hr-dog-shelter",
            "harbor-point-community-shelter",
            "We'll be heading to the Harbor Point shelter if the storm hits, and our dog Biscuit is coming too.",
            "Good to plan ahead. Shelters usually have rules for animals, so check them before you go.",
            "Where will Biscuit have to stay at the shelter, and what do we need to bring for him?",
            [r"annex|boathouse", r"crate"],
            ["fictional"],
            early_index=0,
        )
    )
    g.append(
        history_retention(
            rng,
            "lc-hr-penicillin",
            "first-aid-patient-assessment",
            "One thing you should know: my wife is allergic to penicillin.",
            "Thanks for telling me. Allergies are important to pass on to any medic who treats her.",
            "If I write up her SAMPLE history for the paramedics, what goes under the A?",
            [r"penicillin"],
            [],
            early_index=1,
        )
    )
    g.append(
        history_retention(
            rng,
            "lc-hr-zone-b",
            "millbrook-county-evacuation-zones",
            "We live in Millbrook County, and our water bill says we're in evacuation Zone B.",
            "Knowing your zone is the first step; orders are given zone by zone.",
            "If an evacuation is ordered for our zone, which reception centre do we go to, and by which road?",
            [r"Hollis High", r"County Road 14"],
            ["fictional"],
            early_index=0,
        )
    )
    # ---- eviction: fact stated in the last few turns of a very long conversation
    g.append(
        eviction(
            rng,
            "lc-ev-tech-score",
            "radio-ham-licensing-basics",
            "Big news: I passed my Technician exam this morning with 31 correct!",
            "Congratulations! Your call sign should show up in the FCC database within a few days.",
            "How many did I get right on the exam, and how many did I need to pass?",
            [r"\b31\b", r"\b26\b"],
            [NU],
        )
    )
    g.append(
        eviction(
            rng,
            "lc-ev-new-tank",
            "water-storage",
            "Update: we replaced the old tank. The new one holds 340 litres.",
            "That's a solid upgrade for four people.",
            "What's the size of the tank I just mentioned, and would it cover two weeks for four people at a gallon each per day?",
            [r"\b340\b"],
            [NU],
            stale=(
                "Our old water tank only holds 275 litres.",
                "That's a start; many families add more containers.",
            ),
        )
    )
    g.append(
        eviction(
            rng,
            "lc-ev-mile-marker",
            "gear-vehicle-emergency-kit",
            "We're stuck in the snow on Route 9 at mile marker 42. The engine still runs.",
            "Stay with the car. Keep the exhaust pipe clear and crack a downwind window when the engine is on.",
            "Which mile marker did I say we're at? I'm about to call the dispatcher.",
            [r"\b42\b"],
            [NU],
        )
    )
    g.append(
        eviction(
            rng,
            "lc-ev-tourniquet-time",
            "first-aid-bleeding-control",
            "I put the tourniquet on his thigh at 14:35 and the bleeding has stopped.",
            "Good. Don't loosen it. Keep him warm and lying down, and watch for signs of shock.",
            "What time should I write on the tourniquet?",
            [r"14:35|2:35"],
            [NU],
        )
    )
    g.append(
        eviction(
            rng,
            "lc-ev-declination",
            "navigation-declination",
            "Checked the margin of this old map: it says declination is 9 degrees west.",
            "Remember declination drifts over the years, so an old map's value may be out of date.",
            "What declination did I just read off the map, and do I add or subtract it going from map to compass?",
            [r"\b9 ?(?:°|degrees?)? ?(?:west|W\b)", r"\badd"],
            [NU],
            stale=(
                "The trail guide I used last year listed declination as 14 degrees east.",
                "Guides and maps often differ; always check the date.",
            ),
        )
    )
    g.append(
        eviction(
            rng,
            "lc-ev-daily-usage",
            "power-solar-sizing",
            "I measured everything with a watt meter: we use 1,150 Wh per day.",
            "Measured numbers are far better than nameplate guesses.",
            "What daily usage did I just give you, and with 5 peak sun hours roughly how many watts of panels do I need?",
            [r"1,?150"],
            [NU],
        )
    )
    g.append(
        eviction(
            rng,
            "lc-ev-cot-number",
            "harbor-point-community-shelter",
            "We're checked in at Harbor Point. They gave us blue wristbands and cot number 117.",
            "Blue bands are for residents. Roll call is at 08:00 and 20:00, so stay near your cot then.",
            "Which cot number were we given?",
            [r"\b117\b"],
            [NU, "fictional"],
        )
    )
    return g


def main() -> None:
    goldens = build()
    for gd in goldens:
        n = len(gd["turns"])
        lo, hi = HR_TURNS if "history-retention" in gd["tags"] else EV_TURNS
        assert lo - 2 <= n <= hi, (gd["id"], n)
        assert 30 <= n <= 130, (gd["id"], n)
    with OUT.open("w", encoding="utf-8", newline="\n") as f:
        f.write(
            "// Generated by `python datasets/goldens/make_long_context.py` (random.Random(1341)); "
            "do not edit by hand.\n"
        )
        for gd in goldens:
            f.write(json.dumps(gd, ensure_ascii=False) + "\n")
    for gd in goldens:
        chars = sum(len(t["content"]) for t in gd["turns"])
        print(f"{gd['id']:<26} turns={len(gd['turns']):>3} chars={chars:>6}  {','.join(gd['tags'])}")


if __name__ == "__main__":
    main()
