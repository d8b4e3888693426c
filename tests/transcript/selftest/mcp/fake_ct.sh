#!/bin/sh
# A scripted stand-in for `ct` in the MCP self-tests. `ct init` does nothing; `ct mcp` answers
# each line by pattern (no JSON parsing), good or bad as written below, and at the end of input
# exits with $FAKE_EXIT (default 0). The id is cut out of the raw line, so it keeps its type.
case $1 in
  init) exit 0 ;;
  mcp) ;;
  *) echo "fake ct: unexpected command: $*" >&2; exit 2 ;;
esac
echo "fake ct: serving" >&2
while IFS= read -r line; do
  id=${line#*'"id":'}
  id=${id%%,*}
  case $line in
    *'"method":"notifications/answered"'*) printf '{"jsonrpc":"2.0","id":null,"result":{}}\n' ;;
    *'"method":"notifications/'*) ;;
    *'"method":"ping"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
    *'"method":"echo-id-as-string"'*) printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id" ;;
    *'"method":"tool/good"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\\"success\\":true,\\"data\\":{\\"id\\":\\"T001\\"}}"}],"structuredContent":{"success":true,"data":{"id":"T001"}},"isError":false}}\n' "$id" ;;
    *'"method":"tool/failed"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\\"success\\":false}"}],"structuredContent":{"success":false},"isError":true}}\n' "$id" ;;
    *'"method":"tool/not-compact"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\\"success\\": true}"}],"structuredContent":{"success":true},"isError":false}}\n' "$id" ;;
    *'"method":"tool/not-mirrored"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\\"success\\":true}"}],"structuredContent":{"success":true,"data":1},"isError":false}}\n' "$id" ;;
    *'"method":"tool/wrong-is-error"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\\"success\\":true}"}],"structuredContent":{"success":true},"isError":true}}\n' "$id" ;;
    *'"method":"no-jsonrpc"'*) printf '{"id":%s,"result":{}}\n' "$id" ;;
    *'"method":"result-and-error"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{},"error":{"code":1,"message":"x"}}\n' "$id" ;;
    *'"method":"two-replies"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" "$id" ;;
    *'"method":"setup-file"'*)
      # What "--- file docs/setup.md" wrote into the project (the working directory).
      printf '{"jsonrpc":"2.0","id":%s,"result":{"lines":%s,"headings":%s,"indented":%s}}\n' "$id" \
        "$(wc -l < docs/setup.md)" "$(grep -c '^#' docs/setup.md)" "$(grep -c '^  indented$' docs/setup.md)" ;;
    *'"method":"logged"'*)
      # A log message before the reply it is about (MCP's notifications/message).
      printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":{"message":"careful"}}}\n'
      printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
    *'"method":"silent"'*) ;;
    *'"method":"slow"'*) sleep 2; printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
    *'"method":"not-json"'*) printf 'Traceback (most recent call last):\n' ;;
    *'"method":"crash"'*) echo "fake ct: crashing" >&2; exit 70 ;;
    *) printf '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n' ;;
  esac
done
exit "${FAKE_EXIT:-0}"
