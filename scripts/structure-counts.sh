#!/usr/bin/env bash
# Structure counts for issue 20 (run from the repository root): files over 1,500 lines,
# functions over 200 lines (brace matching from each `fn` line; generated code excluded),
# statics and thread-locals, `json!` and `.get("` uses, `too_many_arguments` allowances.
set -euo pipefail
echo "files over 1500 lines:"
find src -name '*.rs' -print0 | xargs -0 wc -l | awk '$2 != "total" && $1 > 1500 {print "  " $2 " " $1}'
echo "functions over 200 lines:"
find src -name '*.rs' | sort | while read -r f; do
  awk -v f="$f" '
    /^[[:space:]]*(pub(\([a-z]+\))? )?(unsafe )?(extern "C" )?fn [a-zA-Z_0-9]+/ && !infn {
      match($0, /fn [a-zA-Z_0-9]+/); name = substr($0, RSTART + 3, RLENGTH - 3)
      infn = 1; start = NR; depth = 0; opened = 0
    }
    infn {
      n = split($0, ch, "")
      for (i = 1; i <= n; i++) {
        if (ch[i] == "{") { depth++; opened = 1 }
        else if (ch[i] == "}") { depth-- }
      }
      if (opened && depth == 0) {
        if (NR - start + 1 > 200) printf "  %s:%d %s %d\n", f, start, name, NR - start + 1
        infn = 0
      } else if (!opened && $0 ~ /;[[:space:]]*$/) { infn = 0 }
    }' "$f"
done
printf 'statics: %s\n' "$(grep -rnE '^\s*(pub(\([a-z]+\))? )?static ' src | wc -l)"
printf 'thread_local!: %s\n' "$(grep -rn 'thread_local!' src | wc -l)"
printf 'json!: %s\n' "$(grep -rn 'json!' src | wc -l)"
printf '.get(": %s\n' "$(grep -rn '\.get("' src | wc -l)"
printf 'too_many_arguments: %s\n' "$(grep -rn 'too_many_arguments' src | wc -l)"
