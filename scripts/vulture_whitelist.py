"""Names vulture cannot see used: called by pluggy, the standard library, cattrs or attrs, by name from
strings (the registry, the API's lazy table), or only from tests, benchmarks and plugins.

`tox -e lint` runs `vulture episteme_core scripts/vulture_whitelist.py --min-confidence 60
--ignore-decorators @hookimpl,@hookspec,@pytest.fixture` (60 %: vulture's lowest for functions, classes
and variables); a name that is dead in the kernel itself fails it. Regenerate the list with `--make-whitelist` and read
it before adding a line: a line here says the name is used from outside the kernel.
"""
# ruff: noqa

__getattr__  # unused function (episteme_core/api.py:177)
__dir__  # unused function (episteme_core/api.py:188)
also_at  # unused variable (episteme_core/ask/answer.py:68)
Bm25Kind  # unused class (episteme_core/ask/bm25_reader.py:42)
HttpKind  # unused class (episteme_core/ask/http_reader.py:136)
protocol_version  # unused variable (episteme_core/ask/reference_server.py:111)
disable_nagle_algorithm  # unused variable (episteme_core/ask/reference_server.py:112)
_.log_message  # unused method (episteme_core/ask/reference_server.py:114)
_.do_GET  # unused method (episteme_core/ask/reference_server.py:137)
_.do_POST  # unused method (episteme_core/ask/reference_server.py:150)
_.close_connection  # unused attribute (episteme_core/ask/reference_server.py:235)
daemon_threads  # unused variable (episteme_core/ask/reference_server.py:251)
allow_reuse_address  # unused variable (episteme_core/ask/reference_server.py:252)
duration_ms  # unused variable (episteme_core/ask/run.py:76)
excerpts  # unused variable (episteme_core/ask/telemetry.py:34)
paragraphs_in  # unused variable (episteme_core/ask/telemetry.py:42)
excerpts_out  # unused variable (episteme_core/ask/telemetry.py:43)
duration_ms  # unused variable (episteme_core/ask/telemetry.py:57)
fallbacks  # unused variable (episteme_core/ask/telemetry.py:61)
answered  # unused variable (episteme_core/ask/telemetry.py:62)
bm25_scores  # unused function (episteme_core/bm25/build.py:146)
unit_tokens  # unused function (episteme_core/bm25/fields.py:114)
document_tokens  # unused function (episteme_core/bm25/fields.py:154)
chunk_index_fingerprint  # unused variable (episteme_core/bm25/writer.py:60)
_.connect_unix_socket  # unused method (episteme_core/capture/http.py:170)
previous_snapshot_id  # unused variable (episteme_core/capture/run.py:38)
unchanged_listed  # unused variable (episteme_core/capture/run.py:61)
ParagraphChunker  # unused class (episteme_core/chunking/paragraph.py:23)
WindowChunker  # unused class (episteme_core/chunking/window.py:21)
frame  # unused variable (episteme_core/cli/main.py:107)
_.cpu_seconds  # unused method (episteme_core/executor/local.py:115)
element_id  # unused variable (episteme_core/extract/family.py:60)
HtmlExtractor  # unused class (episteme_core/extract/html.py:666)
_.reportCharacterErrors  # unused attribute (episteme_core/extract/html_offsets.py:100)
_.dataState  # unused method (episteme_core/extract/html_offsets.py:115)
_.innerHTMLMode  # unused attribute (episteme_core/extract/html_offsets.py:201)
_.tokenizer  # unused attribute (episteme_core/extract/html_offsets.py:204)
PdfExtractor  # unused class (episteme_core/extract/pdf.py:321)
_._layout  # unused attribute (episteme_core/extract/pdf_bounds.py:75)
reference_pages  # unused function (episteme_core/extract/pdf_recall.py:40)
document_recall  # unused function (episteme_core/extract/pdf_recall.py:125)
TextExtractor  # unused class (episteme_core/extract/text.py:48)
XmlExtractor  # unused class (episteme_core/extract/xml.py:211)
element_id  # unused variable (episteme_core/kernel/contracts.py:92)
contract_table  # unused function (episteme_core/kernel/contracts.py:446)
manager  # unused variable (episteme_core/kernel/registry.py:67)
section_heading  # unused variable (episteme_core/records/evidence.py:77)
producer  # unused variable (episteme_core/records/evidence.py:111)
producer_version  # unused variable (episteme_core/records/evidence.py:112)
block_length  # unused variable (episteme_core/records/evidence.py:265)
position_in  # unused variable (episteme_core/search/query.py:60)
span_exact  # unused variable (episteme_core/search/query.py:62)
selector  # unused variable (episteme_core/search/query.py:63)
_.list_tools  # unused method (episteme_core/serve/mcp.py:40)
_.call_tool  # unused method (episteme_core/serve/mcp.py:52)
_.gid  # unused attribute (episteme_core/stages/bundle.py:73)
_.uid  # unused attribute (episteme_core/stages/bundle.py:73)
_.gname  # unused attribute (episteme_core/stages/bundle.py:74)
_.uname  # unused attribute (episteme_core/stages/bundle.py:74)
write_documents  # unused function (episteme_core/stages/documents.py:55)
_.snapshot_ids  # unused method (episteme_core/stages/snapshots.py:259)
tb  # unused variable (episteme_core/stages/snapshots.py:429)
WRITE_KINDS  # unused variable (episteme_core/store/atomic.py:22)
_.put_json  # unused method (episteme_core/store/commits.py:159)
forget_process_memory  # unused function (episteme_core/store/commits.py:771)
tb  # unused variable (episteme_core/store/lock.py:152)
_.writable  # unused method (episteme_core/store/output.py:54)
killed  # unused variable (episteme_core/testing/crashmatrix.py:64)
fuzz_settings  # unused function (episteme_core/testing/fuzzing.py:21)
count_input  # unused function (episteme_core/testing/fuzzing.py:30)
_write_counts  # unused function (episteme_core/testing/fuzzing.py:35)
json_values  # unused variable (episteme_core/testing/strategies.py:15)
vocabulary  # unused function (episteme_core/text/analyzer.py:384)
_._get_formatter  # argparse's hook, overridden (episteme_core/cli/parser.py:32)
excerpt  # unused variable (episteme_core/ask/answer.py:88): a field of the answer's JSON
marked_as  # unused variable (episteme_core/ask/answer.py:89): a field of the answer's JSON
rerank_score  # unused variable (episteme_core/search/query.py:92): a field of the query's JSON
_.list_resource_templates  # unused method (episteme_core/serve/mcp.py:64): called by the MCP server
_.read_resource  # unused method (episteme_core/serve/mcp.py:71): called by the MCP server
scan_books  # unused function (episteme_core/personal/books.py): the shelf's scan whole, for tests (ingest streams it)
scan_projects  # unused function (episteme_core/personal/claude.py): the projects' scan whole, for tests
_.readable  # unused method (episteme_core/personal/safe_open.py): io.RawIOBase asks it
_canonical_rows  # unused function (episteme_core/stages/chunks.py): the row scanner whole, for its property test
