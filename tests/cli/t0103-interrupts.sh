#!/bin/sh
# Interrupts: SIGINT and SIGTERM, as a terminal and a service manager send
# them, after k ms for a sweep of k from 0 to a little past the time a
# whole run takes, during bundle -o (a work_dir with a 64 MiB random file),
# bundle extract of that bundle into a new folder and with --force over an
# old one, pack into a folder and into a .tar.zst, save -o (a 64 MiB
# checkpoint to hash), export -o, sign -o and keygen --force. After every
# signal: the run died of that signal (the exit status is the signal's) or
# finished with its usual status; it said so in one line or not at all
# (a signal before envlock started); the folder holds exactly what it held
# or the final name, nothing else (no ".NAME.XXXXXX", no
# ".NAME.extract-XXXXXX", no "NAME.tmp-XXXXXX", no "NAME.new"); and the
# final name holds the old content or the complete new one. A truncated
# bundle extracted into a new folder and with --force over an old one:
# status 1, one line naming the archive, the target absent or as it was.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
root=$FIXTURES/ubuntu1604-mmdet
good=$GOLDEN/ubuntu1604-mmdet.lock.json

head -c 67108864 /dev/urandom >big.bin
mkdir wd && cp big.bin wd/weights.pth && printf 'lr = 0.01\n' >wd/train.py
"$ENVLOCK" keygen -o signer >/dev/null 2>&1 || not_ok "keygen of the signing key"
"$ENVLOCK" bundle wd -o wd.tar.zst --lock "$good" >/dev/null 2>&1
check_status "the bundle the extractions read" 0 $?

# --- a truncated bundle: nothing made, or the old folder as it was
size=$(wc -c <wd.tar.zst | tr -d ' ')
head -c $((size / 2)) wd.tar.zst >cut.tar.zst
cut_line="envlock: bundle extract: 'cut.tar.zst': truncated zstd input (in 'wd/weights.pth')"
mkdir t && "$ENVLOCK" bundle extract cut.tar.zst t/new >stdout.txt 2>err
check_status "a truncated bundle into a new folder" 1 $?
check_eq "a truncated bundle: one line naming the archive and the entry it cut" "$cut_line" "$(cat err)"
check_eq "a truncated bundle: no target, no staging folder left" "" "$(ls -A t)"
mkdir -p t/old/wd t/old/keep && printf 'mine\n' >t/old/notes.txt && printf 'old\n' >t/old/wd/train.py
ln -s notes.txt t/old/link
before=$(cd t && find old -exec ls -ld --time-style=+%s {} + | sort)
"$ENVLOCK" bundle extract --force cut.tar.zst t/old >stdout.txt 2>err
check_status "a truncated bundle with --force over an old folder" 1 $?
check_eq "a truncated bundle with --force: one line naming the archive" "$cut_line" "$(cat err)"
check_eq "a truncated bundle with --force: nothing beside the old folder" "old" "$(ls -A t)"
check_eq "a truncated bundle with --force: the old folder as it was, times included" "$before" \
	"$(cd t && find old -exec ls -ld --time-style=+%s {} + | sort)"
# a flipped byte in the weights: the digest does not match, and again nothing is left (a byte
# of data, not of a zstd block header: the frames carry no checksum, so zstd -t still passes)
"$PYTHON" - wd.tar.zst <<'PY'
import subprocess, sys
orig = open(sys.argv[1], 'rb').read()
for at in range(len(orig) // 2, len(orig) // 2 + 64):
    b = bytearray(orig)
    b[at] ^= 1
    open('flip.tar.zst', 'wb').write(b)
    if subprocess.run(['zstd', '-tq', 'flip.tar.zst'], stderr=subprocess.DEVNULL).returncode == 0:
        break
PY
"$ENVLOCK" bundle extract --force flip.tar.zst t/old >stdout.txt 2>err
check_status "a corrupt bundle with --force" 1 $?
check_eq "a corrupt bundle with --force: one line naming the archive" \
	"envlock: bundle extract: 'flip.tar.zst': entry 'wd/weights.pth': content does not match its sha256 in the manifest" \
	"$(cat err)"
check_eq "a corrupt bundle with --force: the old folder as it was, nothing beside it" "$before
old" "$(cd t && find old -exec ls -ld --time-style=+%s {} + | sort; ls -A)"

# --- the sweeps
ENVLOCK=$ENVLOCK ROOT=$root GOOD=$good "$PYTHON" - >results.txt 2>harness.err <<'PY'
import hashlib, json, os, re, shutil, signal, stat, subprocess, sys, time

E, ROOT, GOOD = os.environ['ENVLOCK'], os.environ['ROOT'], os.environ['GOOD']
# a suite started as a background job of a script runs with SIGINT ignored, and envlock keeps
# an ignored SIGINT ignored (see below): the sweeps' envlock must start with it as a terminal gives it
signal.signal(signal.SIGINT, signal.SIG_DFL)
POINTS = 10
SIGS = (signal.SIGINT, signal.SIGTERM)
NAME = {signal.SIGINT: 'SIGINT', signal.SIGTERM: 'SIGTERM'}
# every temporary name envlock uses: el_tmpfile's ".NAME.XXXXXX", extract's ".NAME.extract-XXXXXX",
# pack's "NAME.tmp-XXXXXX", keygen --force's "NAME.new": none may be left
TEMP = re.compile(r'^\.[^/]+\.[A-Za-z0-9]{6}$|^\.[^/]+\.extract-[A-Za-z0-9]{6}$|^[^/]+\.tmp-[A-Za-z0-9]{6}$|^[^/]+\.new$')
OLD = b'{"the": "old file"}\n'
started = time.monotonic()

def run(argv):
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

def read(path):
    try:
        return open(path, 'rb').read()
    except (FileNotFoundError, IsADirectoryError):
        return None

def tree(d):
    """every entry under d: its type, mode and content (sha256) or link target"""
    if not os.path.isdir(d):
        return None
    out = {}
    for base, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(base, n)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                v = ('link', os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                v = ('dir', oct(st.st_mode & 0o7777))
            else:
                v = ('file', oct(st.st_mode & 0o7777), hashlib.sha256(open(p, 'rb').read()).hexdigest())
            out[os.path.relpath(p, d)] = v
    return out

def report(name, problems, what):
    print(('ok - ' if not problems else 'not ok - ') + name + ': ' + what)
    for p in problems[:8]:
        print('#   ' + p)

def said(err, sig, subjects, folder, caught):
    """None when stderr is one line saying what happened to this run (or empty), else why not;
    caught[0] counts the lines of a polling section (the output named)"""
    s = NAME[sig]
    if err == b'':
        return None
    text = err.decode(errors='replace')
    lines = text.split('\n')
    if len(lines) != 2 or lines[1] != '':
        return 'not one line: %r' % text
    line = lines[0]
    # the polling section's line, naming the output: "envlock: CMD: 'OUT': interrupted by SIG; nothing written"
    for cmd, out in subjects:
        if line == "envlock: %s: '%s': interrupted by %s; nothing written" % (cmd, out, s):
            caught[0] += 1
            return None
    # the handler's own line, and the temporary file it removed, in the folder
    if line == 'envlock: interrupted by %s' % s:
        caught[0] += not subjects
        return None
    m = re.fullmatch(r"envlock: interrupted by %s; removed '(.*)'" % s, line)
    if m and os.path.dirname(m.group(1)) == folder and TEMP.match(os.path.basename(m.group(1))):
        caught[0] += 1
        caught[1] += 1
        return None
    return 'not what happened: %r' % line

def sweep(name, argv, folder, keep, setup, judge, subjects, works=(0,), caught_at_least=2, second=None):
    """judge(finished) -> problems with the final name: the old content or the complete new
    one after a signal, the complete new one after a run that finished. subjects: the
    (command, output) a polling section's line names; at least caught_at_least of those
    lines (of the handler's, without subjects) must come. second: a second signal that
    many seconds after the first, which kills at once"""
    t0 = time.monotonic()
    whole = None
    # the signal points spread over the shortest of two whole runs (a cold page cache makes the first slow)
    for _ in range(2):
        setup()
        t = time.monotonic()
        r = run(argv)
        took = time.monotonic() - t
        whole = took if whole is None else min(whole, took)
    if r.returncode not in works or judge(True):
        report(name, ['the uninterrupted run failed (%d): %s %s' % (r.returncode, r.stderr.decode(errors='replace'),
                                                                   judge(True))], 'runs whole')
        return
    status, lines, stray, torn, caught = [], [], [], [], [0, 0]
    for i in range(POINTS):
        k = whole * 1.1 * i / (POINTS - 1)
        sig = SIGS[i % 2]
        at = '%s after %.0f ms' % (NAME[sig], k * 1000)
        setup()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(k)
        p.send_signal(sig)
        if second is not None:
            time.sleep(second)
            sig = SIGS[(i + 1) % 2]
            if p.poll() is None:
                p.send_signal(sig)
        _, err = p.communicate()
        finished = p.returncode in works
        # after a second signal, the first may have been the one that ended the run
        sigs = (sig, SIGS[i % 2]) if second is not None else (sig,)
        if not finished and -p.returncode not in sigs:
            status.append('%s: exit status %d, not the signal (%d) nor %s' % (at, p.returncode, -sig, works))
        if not finished:
            why = [said(err, s, subjects, folder, caught) for s in sigs]
            if None not in why:
                lines.append('%s: %s' % (at, why[0]))
        listing = sorted(os.listdir(folder))
        if not set(listing) <= set(keep) or [f for f in listing if TEMP.match(f)]:
            stray.append('%s: the folder holds %s, not only %s' % (at, listing, sorted(keep)))
        torn += ['%s: %s' % (at, x) for x in judge(finished)]
    took = (time.monotonic() - t0) * 1000
    if second is not None:
        report(name, [] if caught[1] >= caught_at_least else
               ['only %d of %d runs were killed by the second signal with a temporary file to remove' % (caught[1], POINTS)],
               'a second signal kills at once, removing the temporary file (%d of %d; a run takes %.0f ms, the sweep %.0f ms)'
               % (caught[1], POINTS, whole * 1000, took))
    else:
        report(name, [] if caught[0] >= caught_at_least else
               ['only %d of %d runs were caught by envlock before they ended (a whole run: %.0f ms)' % (caught[0], POINTS, whole * 1000)],
               'interrupted in the middle (%d of %d signals caught; a run takes %.0f ms, the sweep %.0f ms)'
               % (caught[0], POINTS, whole * 1000, took))
    report(name, status, 'the exit status is the signal\'s, or the run finished')
    report(name, lines, 'one line on stderr saying what happened, or none')
    report(name, stray, 'nothing left in the folder but the final name')
    report(name, torn, 'the final name holds the old content or the complete new one')

def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)

# --- bundle -o: the old file, or the reference bundle byte for byte (it is reproducible)
def bundle_setup():
    fresh('out')
    open('out/b.tar.zst', 'wb').write(OLD)
argv = [E, 'bundle', 'wd', '-o', 'out/b.tar.zst', '--lock', GOOD]
bundle_setup(); run(argv); REFB = read('out/b.tar.zst')
r = run([E, 'bundle', 'verify', 'out/b.tar.zst'])
report('bundle', [r.stderr.decode(errors='replace')] if r.returncode else [], 'the reference bundle verifies')
def bundle_judge(finished):
    b = read('out/b.tar.zst')
    if b == REFB or (b == OLD and not finished):
        return []
    return ['a file of %d bytes, not the old one nor the whole bundle (%d)' % (len(b or b''), len(REFB))]
sweep('bundle -o', argv, 'out', {'b.tar.zst'}, bundle_setup, bundle_judge, [('bundle', 'out/b.tar.zst')])
# a second signal straight after the first (an impatient user): the handler removes the
# registered temporary file itself and the run dies at once, whatever thread it lands on
sweep('bundle -o, twice', argv, 'out', {'b.tar.zst'}, bundle_setup, bundle_judge, [('bundle', 'out/b.tar.zst')],
      second=0, caught_at_least=3)

# a SIGINT ignored when envlock starts (nohup, a background job of a script) stays ignored
bundle_setup()
p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
time.sleep(0.02)
p.send_signal(signal.SIGINT)
_, err = p.communicate()
report('bundle -o', [] if (p.returncode, err, read('out/b.tar.zst') == REFB) == (0, b'', True) else
       ['status %d, stderr %r, the whole bundle: %s' % (p.returncode, err, read('out/b.tar.zst') == REFB)],
       'a SIGINT ignored from the start stays ignored: the bundle is written whole')

# --- bundle extract into a new folder: nothing, or the whole tree
argv = [E, 'bundle', 'extract', 'wd.tar.zst', 'x/new']
fresh('x'); run(argv); REFX = tree('x/new')
report('bundle extract', [] if REFX and REFX.get('wd/weights.pth') == tree('wd')['weights.pth'] else ['%s' % REFX],
       'the reference extraction holds the work_dir')
def extract_judge(finished):
    got = tree('x/new')
    if got == REFX or (got is None and not finished):
        return []
    return ['x/new is neither absent nor the whole tree: %s' % (sorted(got) if got else got)]
sweep('bundle extract', argv, 'x', {'new'}, lambda: fresh('x'), extract_judge,
      [('bundle extract', 'x/new')])

# --- bundle extract --force over an old folder: the old folder as it was, or the archive's
# entries in it beside the old folder's others (kept)
def force_setup():
    fresh('x')
    os.makedirs('x/old/wd')
    os.makedirs('x/old/keep')
    open('x/old/notes.txt', 'w').write('mine\n')
    open('x/old/wd/train.py', 'w').write('old\n')
    os.symlink('notes.txt', 'x/old/link')
force_setup(); OLDX = tree('x/old')
argv = [E, 'bundle', 'extract', '--force', 'wd.tar.zst', 'x/old']
force_setup(); run(argv); NEWX = tree('x/old')
want = dict(OLDX)
want.update(REFX)
report('bundle extract --force', [] if NEWX == want else ['%s' % NEWX],
       'the reference extraction is the archive over the old folder, its other entries kept')
def force_judge(finished):
    got = tree('x/old')
    if got == NEWX or (got == OLDX and not finished):
        return []
    return ['x/old is neither the old folder nor the whole new one: %s' % (sorted(got) if got else got)]
sweep('bundle extract --force', argv, 'x', {'old'}, force_setup, force_judge,
      [('bundle extract', 'x/old')])

# --- pack into a folder, over an old kit (--force): the old kit, or the whole new one
def kit_setup():
    fresh('out')
    os.makedirs('out/kit')
    open('out/kit/old.txt', 'wb').write(OLD)
argv = [E, 'pack', GOOD, '-o', 'out/kit', '--force', '--add', 'big.bin']
kit_setup(); OLDK = tree('out/kit')
# the golden lock's archives are not on this machine: a kit with them listed missing, status 1
kit_setup(); r = run(argv); REFK = tree('out/kit')
report('pack -o DIR', [] if r.returncode == 1 and REFK and 'files/big.bin' in REFK else
       ['status %d: %s' % (r.returncode, r.stderr.decode(errors='replace'))], 'the reference kit holds the file')
def kit_judge(finished):
    got = tree('out/kit')
    if got == REFK or (got == OLDK and not finished):
        return []
    return ['out/kit is neither the old kit nor the whole new one: %s' % (sorted(got) if got else got)]
sweep('pack -o DIR', argv, 'out', {'kit'}, kit_setup, kit_judge, [('pack', 'out/kit')], works=(1,))

# --- pack into a .tar.zst: the old file, or a whole kit (it verifies as a bundle)
def pack_setup():
    fresh('out')
    open('out/kit.tar.zst', 'wb').write(OLD)
argv = [E, 'pack', GOOD, '-o', 'out/kit.tar.zst', '--force', '--add', 'big.bin']
def pack_judge(finished):
    b = read('out/kit.tar.zst')
    if b == OLD and not finished:
        return []
    r = run([E, 'bundle', 'verify', 'out/kit.tar.zst'])
    return [] if r.returncode == 0 else ['a kit that does not verify (%d bytes): %s' % (len(b or b''), r.stderr.decode(errors='replace').strip())]
sweep('pack -o FILE.tar.zst', argv, 'out', {'kit.tar.zst'}, pack_setup, pack_judge,
      [('pack', 'out/kit.tar.zst')], works=(1,))

# --- save -o: the old lock, or a whole new one with the reference id
def lock_id(path):
    d = json.load(open(path, encoding='utf-8'))
    for k in ('id', 'created', 'verify'):
        d.pop(k, None)
    return 'sha256:' + hashlib.sha256(json.dumps(d, sort_keys=True, ensure_ascii=False,
                                                 separators=(',', ':')).encode()).hexdigest()
def save_setup():
    fresh('out')
    open('out/m.lock.json', 'wb').write(OLD)
argv = [E, 'save', '-q', '--root', ROOT, '--no-cache', '--checkpoint', os.path.abspath('big.bin'), '-o', 'out/m.lock.json']
save_setup(); run(argv); REFL = lock_id('out/m.lock.json')
def save_judge(finished):
    b = read('out/m.lock.json')
    if b == OLD and not finished:
        return []
    try:
        return [] if lock_id('out/m.lock.json') == REFL else ['a lock with another id']
    except Exception as e:
        return ['not a whole lock (%d bytes): %s' % (len(b or b''), e)]
sweep('save -o', argv, 'out', {'m.lock.json'}, save_setup, save_judge, [], caught_at_least=0)

# --- export -o and sign -o: the old file, or the reference bytes
for name, argv, out in (('export -o', [E, 'export', GOOD, '--format', 'dockerfile', '-o', 'out/Dockerfile'], 'out/Dockerfile'),
                        ('sign -o', [E, 'sign', GOOD, '--key', 'signer.key.pem', '-o', 'out/s.sig'], 'out/s.sig')):
    def setup(out=out):
        fresh('out')
        open(out, 'wb').write(OLD)
    setup(); run(argv); ref = read(out)
    def judge(finished, out=out, ref=ref):
        b = read(out)
        return [] if b == ref or (b == OLD and not finished) else ['neither the old file nor the whole new one']
    sweep(name, argv, 'out', {os.path.basename(out)}, setup, judge, [], caught_at_least=0)

# --- keygen --force over a pair: the old pair, or a new pair that belongs together; never NAME.new
OLDK, OLDP = b'old private\n', b'old public\n'
def keygen_setup():
    fresh('out')
    open('out/k.key.pem', 'wb').write(OLDK)
    open('out/k.pub.pem', 'wb').write(OLDP)
def pub_of(priv):
    r = subprocess.run(['openssl', 'pkey', '-in', priv, '-pubout'], capture_output=True)
    return r.stdout if r.returncode == 0 else None
def keygen_judge(finished):
    k, p = read('out/k.key.pem'), read('out/k.pub.pem')
    if (k, p) == (OLDK, OLDP) and not finished:
        return []
    return [] if k not in (None, OLDK) and pub_of('out/k.key.pem') == p else ['not the old pair nor a new pair that belongs together']
sweep('keygen --force', [E, 'keygen', '-o', 'out/k', '--force'], 'out', {'k.key.pem', 'k.pub.pem'}, keygen_setup,
      keygen_judge, [('keygen', 'out/k.key.pem'), ('keygen', 'out/k.pub.pem')], caught_at_least=0)
print('# the sweeps took %.1f s' % (time.monotonic() - started))
PY
check_status "the interrupt harness ran" 0 $?
# what went wrong in the harness itself (a traceback), as TAP comments
tail -n 20 harness.err | sed 's/^/#   /'
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) echo "$line" ;;
	esac
done <results.txt
