"""The slowest tests of a run, from nextest's JUnit records.

    python3 scripts/lib/slowest.py [--most N] JUNIT.xml...

Prints a Markdown table of the N (default 20) slowest test cases, slowest
first: seconds, the test binary (JUnit's suite) and the test's name, then how
many tests were read and their summed time (more than the wall time: tests
run side by side), and every test that failed before passing on its retry.
"""

import sys
import xml.etree.ElementTree as ET


def main(argv):
    most = 20
    if len(argv) >= 2 and argv[0] == "--most":
        most = int(argv[1])
        argv = argv[2:]
    cases = []
    flaky = []
    for path in argv:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as error:
            print(f"slowest: {path}: {error}", file=sys.stderr)
            continue
        for suite in root.iter("testsuite"):
            for case in suite.iter("testcase"):
                cases.append((float(case.get("time", "0")), suite.get("name", "?"), case.get("name", "?")))
                if case.find("flakyFailure") is not None:
                    flaky.append(f"{suite.get('name', '?')} {case.get('name', '?')}")
    if not cases:
        return 0
    cases.sort(reverse=True)
    print()
    print(f"| slowest tests | seconds |")
    print("| --- | ---: |")
    for seconds, suite, name in cases[:most]:
        print(f"| {suite} {name} | {seconds:.1f} |")
    total = sum(seconds for seconds, _, _ in cases)
    print(f"\n{len(cases)} tests, {total:.0f} s of test time in all")
    if flaky:
        print(f"\nFLAKY (failed, then passed on the retry): {len(flaky)}")
        for name in flaky:
            print(f"- {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
