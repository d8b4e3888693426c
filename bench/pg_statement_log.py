#!/usr/bin/env python3
"""Read transactions of a PostgreSQL server log (log_min_duration_statement = 0): per transaction
(BEGIN ISOLATION LEVEL REPEATABLE READ … ROLLBACK), the statements executed and the server's time
(parse + bind + execute), grouped by the transaction's first statement.

  bench/pg_statement_log.py SERVER_LOG [TEXT]

TEXT keeps only the transactions whose first statement holds it (default: the words' counts of a
memory find, 'coalesce(sum(entries)'). Prints, per group: transactions, statements (median),
server ms (median, min) and the ms spent in `count(*) FROM memory` (in all)."""
import re
import sys
from collections import defaultdict

DURATION = re.compile(r'duration: ([0-9.]+) ms  (parse|bind|execute|statement)[^:]*: (.*)')


def transactions(lines):
    out, current = [], None
    for line in lines:
        match = DURATION.search(line)
        if not match:
            continue
        ms, kind, sql = float(match.group(1)), match.group(2), match.group(3)
        if sql.startswith('BEGIN ISOLATION LEVEL REPEATABLE READ'):
            if kind == 'parse' or current is None or current['first'] is not None:
                current = {'statements': 0, 'ms': 0.0, 'first': None, 'count_ms': 0.0}
                out.append(current)
            current['ms'] += ms
            continue
        if current is None:
            continue
        current['ms'] += ms
        if sql.startswith('ROLLBACK'):
            current = None
            continue
        if kind in ('execute', 'statement'):
            current['statements'] += 1
            if current['first'] is None:
                current['first'] = sql[:60]
        if 'count(*) FROM memory' in sql:
            current['count_ms'] += ms
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    text = sys.argv[2] if len(sys.argv) > 2 else 'coalesce(sum(entries)'
    with open(sys.argv[1], errors='replace') as log:
        found = [t for t in transactions(log.read().split('\n')) if t['first'] and text in t['first']]
    groups = defaultdict(list)
    for t in found:
        groups[t['first']].append(t)
    for first, group in groups.items():
        ms = sorted(t['ms'] for t in group)
        statements = sorted(t['statements'] for t in group)
        print(f"{len(group)} transactions, first: {first!r}\n  statements (median) {statements[len(group) // 2]}, "
              f"server ms median {ms[len(group) // 2]:.3f} min {ms[0]:.3f}, "
              f"count(*) ms in all {sum(t['count_ms'] for t in group):.1f}")


if __name__ == '__main__':
    main()
