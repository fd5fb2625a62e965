#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The real work profiled by harness/install-test in the installed system,
# all of it Debian's own programs: systemd's services, apt-get from a
# local repository, a compile with gcc, python3 and perl programs and a
# shell pipeline, two at a time so that more than one CPU is busy.  The
# same every run (profile.py records it once per call-graph mode).
#
# usage: work.sh SCRATCH_DIR
set -eu
export LC_ALL=C
dir=$1
repo=/srv/repo
mkdir -p "$dir"
cd "$dir"

# apt-get on a repository of its own, as a machine with a local mirror
# would use it: index, update, install, remove.
apt_work() {
	local opts=(-o Dir::Etc::sourcelist=/etc/apt/local.list
		    -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0 -q)

	(cd "$repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null)
	apt-get "${opts[@]}" update >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" install -y hello cowsay >/dev/null
	hello >/dev/null
	/usr/games/cowsay moo >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get -q remove -y hello cowsay >/dev/null
}

# systemd's own services at work: restarts, the journal read and written
systemd_work() {
	systemctl restart cron systemd-journald systemd-logind
	systemd-run --wait -q -p Type=oneshot /bin/true
	journalctl -q --no-pager -o verbose -n 3000 >/dev/null
	systemctl list-units --all --no-pager >/dev/null
	logger -t install-test "work done"
}

# A C file with many functions, compiled the way packages are
gcc_work() {
	python3 - >prog.c <<-'EOF'
	for i in range(300):
	    print('static int f%d(int x) { int s = 0; for (int i = 0; i < x; i++) '
	          's += (i * %d) ^ (s >> 3); return s; }' % (i, i + 1))
	print('int main(int c, char **v) { int s = 0;')
	for i in range(300):
	    print('  s += f%d(c + %d);' % (i, i))
	print('  return s & 1; }')
	EOF
	gcc -O2 -g -c prog.c -o prog.o
	gcc prog.o -o prog
	./prog || true
}

python_work() {
	python3 - <<-'EOF'
	import json, os, re, collections
	def tree(n):
	    return {'n': n, 'kids': [tree(n - 1) for _ in range(2)]} if n else {'n': 0}
	def depth(t):
	    return 1 + max((depth(k) for k in t.get('kids', [])), default=0)
	t = tree(12)
	s = json.dumps(t)
	assert depth(json.loads(s)) == 13
	words = collections.Counter(re.findall(r'[a-z_]+', open(os.__file__).read()))
	print(len(words), sum(i * i for i in range(300000)))
	EOF
}

perl_work() {
	perl -e '
		my %h; my $n = 0;
		for my $f (glob("/usr/share/perl5/*.pm"), glob("/usr/share/perl/5.*/*.pm")) {
			open(my $fh, "<", $f) or next;
			while (<$fh>) { $h{$_}++ for /(\w+)/g; $n++ }
		}
		my @top = (sort { $h{$b} <=> $h{$a} } keys %h)[0 .. 9];
		sub fib { my $x = shift; $x < 2 ? $x : fib($x - 1) + fib($x - 2) }
		print scalar(keys %h), " @top ", fib(18), "\n";'
}

shell_work() {
	find /usr/share/doc -type f -name '*.gz' | head -200 | xargs zcat 2>/dev/null |
		tr -cs 'A-Za-z' '\n' | tr 'A-Z' 'a-z' | sort | uniq -c | sort -rn | head -5
	seq 1 60000 | awk '{ s += $1 * $1 } END { print s }'
	i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); done
}

{ apt_work; systemd_work; } >apt.out 2>&1 &
a=$!
{ gcc_work; shell_work; } >gcc.out 2>&1 &
b=$!
{ python_work; perl_work; } >py.out 2>&1
rc=0
wait $a || { echo "apt/systemd work failed: $(tail -2 apt.out)" >&2; rc=1; }
wait $b || { echo "gcc/shell work failed: $(tail -2 gcc.out)" >&2; rc=1; }
exit $rc
