"""The evidence the readers of :mod:`mem.enrich.entities` weigh, data only: words that are never
names, words that make a name a person, the shapes of files, sites and versions. Lower-case,
space-separated. Stdlib only.
"""

from __future__ import annotations

from mem.enrich.lexicon import LABEL_WORDS

# Known names that are also everyday words: only counted when capitalised mid-sentence
# ("we chose Rust"), in capitals ("REST") or in backticks, never in lower case ("rust on the
# car", "make sure", "a therapy session", "a social worker").
AMBIGUOUS = frozenset("""
go rust swift make express next react angular black rich click requests hypothesis celery jest
mocha rails spring bootstrap babel prettier cypress playwright selenium puppeteer hibernate
transformers tokenizers airflow pillow ruby java apache
rest rag mr pr ide cookie secret session worker branch commit thread token incident permission
container bug timeout callback
""".split())
# Known names that are also first names: capitalised they are treated as names, not tools.
PERSONISH = frozenset({"ruby", "julia"})
# Everyday capitalised words that are never names on their own, wherever they stand.
STOP = frozenset("""
a an the and or but nor so yet for of in on at to from by with without about into onto over under
after before during since until till via per than then thus also as if because though although
while whereas whether either neither both each every any all some no not none nothing everything
something anything everyone someone anyone nobody everybody somebody i me my mine myself we us our
ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its
itself they them their theirs themselves this that these those there here what which who whom
whose when where why how is am are was were be been being do does did done doing have has had
having can could shall should will would may might must let lets oh ok okay yes yeah yep yup nope
hi hey hello thanks thank please sorry wow well sure cool great nice awesome lol omg btw fyi asap
imo tbh today yesterday tomorrow tonight now later soon recently morning afternoon evening night
week weekend month year day days weeks months years monday tuesday wednesday thursday friday
saturday sunday january february march april june july august september october november december
mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec
spring summer fall autumn winter mr mrs ms miss dr prof sir madam mom dad mum mommy daddy don won
isn doesn didn couldn shouldn wouldn aren wasn weren haven hasn hadn ain ll ve re im ive dear
note notes todo fixme xxx hack warning error info debug tip faq etc vs
""".split())
# Capitalised only because they open a sentence: ignored there, and they never start a name.
STARTERS = frozenset("""
just also still even maybe perhaps actually really definitely probably finally first second third
next last then after afterwards later earlier however therefore anyway besides meanwhile instead
otherwise overall luckily unfortunately fortunately honestly basically update updated added fixed
removed changed use using used run running make made check see remember decided switched moved
tried need needs wanted want think thought know knew feel felt love loved like liked got get went
go going come came started start finished working work looks look looking sounds sound seems good
bad new old met saw told asked called took gave said left ran read set put sent won lost paid
bought found heard kept meant brought built sure glad happy excited thinking wondering hope hoped
congrats congratulations yay haha hmm um uh ah aw ooh whoa plus sometimes always never often usually
once twice another other such many much more most few several our everyone anyway wait listen look
""".split())
# Following a name, these make it a person ("Jon said", "Gina asked").
PERSON_VERBS = frozenset("""
said says told tells asked asks thinks thought mentioned mentions suggested suggests replied
replies wrote writes explained explains recommended recommends agreed agrees shared shares wants
wanted loves loved likes liked prefers preferred feels felt decided decides
""".split())
# Before a name, these make it a person ("Dr. Smith", "my friend Jake").
PERSON_BEFORE = frozenset("""
mr mrs ms miss dr prof sir madam aunt uncle grandma grandpa cousin friend friends sister brother
wife husband son daughter mom dad mother father boss colleague coworker teammate partner
girlfriend boyfriend neighbor neighbour manager mentor
""".split())
# A capitalised word that is one of these is a person, not some other name.
FIRST_NAMES = frozenset("""
aaron abby abigail adam adrian aisha alan albert alex alexander alexis alice alicia allison amanda
amber amy ana andre andrea andrew andy angela angelina ann anna anne anthony antonio april ashley
audrey austin ava barbara ben benjamin beth betty bill billy bob brad brandon brenda brian brittany
bruce bryan calvin cameron carl carlos carol caroline carolyn catherine charles charlie charlotte
chloe chris christian christina christine christopher cindy claire clara cody colin connor craig
crystal cynthia dan daniel danielle dave david dawn dean debbie deborah debra denise dennis derek
diana diane dominic donald donna doris dorothy douglas dylan ed eddie edward elena eli elijah
elizabeth ella ellen emily emma eric erica erin ethan eva evan evelyn faith fiona frances francis
frank fred gabriel gary gavin george gina grace greg gregory hannah harold harry heather helen
henry holly howard ian isaac isabella jack jackson jacob jake james jamie jane janet janice jason
jasmine jean jeff jeffrey jennifer jenny jeremy jerry jess jessica jill jim jimmy joan joanna joe
joel john johnny jolene jon jonathan jordan jose joseph josh joshua joy joyce juan judith judy
julia julian julie justin karen kate katherine kathleen kathy katie kayla keith kelly ken kenneth
kevin kim kimberly kyle laura lauren leah lee leo leon linda lisa liam logan lois louis lucas lucy
luis luke lydia madison maggie marcus margaret maria marie marilyn mark martha martin mary mason
matt matthew maya megan mel melanie melissa michael michelle mike mila molly monica morgan nancy
natalie nate nathan nicholas nick nicole noah nora olivia oliver oscar owen pam pamela patricia
patrick paul paula peter philip phillip priya rachel raj ralph randy ray rebecca richard rick
rita rob robert robin roger ronald rose ruby russell ruth ryan sam samantha samuel sandra sara
sarah scott sean sebastian sharon shawn sophia sophie stephanie stephen steve steven sue susan
tammy tanya taylor teresa terry theresa thomas tiffany tim timothy tina todd tom tony tracy tyler
valerie vanessa victor victoria vincent virginia walter wayne wendy william willie zach zoe
""".split())
# A dotted word ending in one of these is a file ("app.py"), a slashed one a path ("docs/x.md").
FILE_EXTS = frozenset("""
py pyi pyx ipynb js jsx ts tsx mjs cjs json jsonl yaml yml toml ini cfg conf md rst txt csv tsv
sql sh bash zsh fish go rs rb java kt kts c h cpp hpp cc cs swift php html htm css scss sass less
lock env log xml proto tf lua vue svelte gradle mk bat ps1 db sqlite parquet whl gz tgz zip tar pdf
png jpg jpeg gif svg webp mp3 mp4 wav onnx pt pth pkl npy npz bin so dll dylib exe jar r rmd
""".split())
# Extension-less file names common enough to recognise as paths.
FILE_NAMES = frozenset("""
makefile dockerfile readme license changelog procfile gemfile rakefile jenkinsfile vagrantfile
justfile containerfile
""".split())
# Two slashed parts are a path ("src/db") when the first is one of these, not "client/server".
DIRS = frozenset("src lib libs tests test docs bin app apps pkg cmd scripts config etc var usr tmp "
                 "home opt node_modules build dist vendor internal examples assets static public".split())
# A lower-case dotted word ending in one of these is a site ("numpy.org").
TLDS = frozenset("com org net io dev ai app co edu gov uk de fr info me sh xyz cloud".split())
# Dotted words that are abbreviations, neither files nor sites.
ABBREVIATIONS = frozenset("e.g i.e a.m p.m etc vs ph.d u.s u.k n.b".split())
# A bare "3.11" is a version after one of these words ("upgrade to 3.11"), else just a number.
VERSION_BEFORE = frozenset("""
version ver release to from upgrade upgraded upgrading downgrade downgraded bump bumped pin pinned
on requires require needs need using use supports support at
""".split())
# Heading labels a note opens with ("Note:", "Retro:", "Runbook:"): no speaker, whatever the case of the word after.
# What follows one is classified by what it says (``mem.enrich.classify``).
NOTE_LABELS = frozenset(label.strip() for label in """note, notes, nb, ps, fyi, reminder, important, info, heads up,
    tip, tips, warning, caution, caveat, gotcha, decision, decisions, decided, adr, todo, to do, fixme, step,
    steps, example, correction, update, status, summary, tl;dr, tldr, re, subject, answer, question,
    action, action item, next steps, result, outcome, output, input, command, commands, http, https, file,
    path, usage, context, background, goal, problem, fix, solution, reason, why, because, rationale, cause,
    deadline, edit, rule, policy, lesson, lessons learned, til, idea, plan, owner, breaking change, error,
    bug, issue, wiki, runbook, playbook, retro, retrospective, standup, stand-up, sync, handover, handoff, proposal,
    history, convention, conventions, experiment, triage, glossary, onboarding, incident, postmortem, post-mortem,
    recap, minutes, changelog, release notes, announcement, faq, digest, episode""".split(","))
# Opening a line before a colon, these are no speaker: a note's heading ("Note: ...", "Correction: ..."), a chat
# role ("Q:", "Assistant:") or a mail header ("From:", "Cc:").
SPEAKER_STOP = frozenset("human ai system task hint source date time fwd cc bcc from to".split()) | LABEL_WORDS | NOTE_LABELS
# Lower-case words inside one name: "Bank of America", "Ludwig van Beethoven".
CONNECTORS = frozenset("of de van von der den da del du la le".split())
