# A small JSON reader (RFC 8259) in plain Julia, for the memory snapshot
# (`memory_snapshot`): Base and the standard library have none, and the
# package has no dependencies. It follows the Rust binding's reader
# (bindings/rust/src/json.rs) function for function, so that one review
# covers both: the same grammar, the same errors, the same depth limit.
#
# Values: objects -> Dict{String,Any} (a repeated name: the last wins),
# arrays -> Vector{Any}, strings -> String (every escape decoded, `\uXXXX`
# surrogate pairs joined, a lone surrogate refused), integers written
# without fraction or exponent that fit an Int64 -> Int64, other numbers ->
# Float64 (finite), true/false -> Bool, null -> nothing (as JSON.jl). A
# number Float64 cannot hold is refused (Base.tryparse decides the edge:
# it may also refuse one that underflows to 0, where the Rust reader gives
# 0.0; the snapshot has no such numbers).

"""
    JSONError(offset, message)

Thrown by [`parse_json`](@ref) for a text that is not JSON: `offset` is
the 0-based byte offset of the problem, `message` says what is wrong there.
"""
struct JSONError <: Exception
    offset::Int
    message::String
end

Base.showerror(io::IO, e::JSONError) =
    print(io, "JSONError: invalid JSON at byte ", e.offset, ": ", e.message)

# How deep arrays and objects may nest (the reader is recursive: the limit
# keeps it off the end of the stack).
const JSON_MAX_DEPTH = 256

# What _json_peek gives past the end of the text: 0xff is never a byte of
# valid UTF-8 (checked first), so it cannot be confused with a real byte.
const _JSON_END = 0xff

mutable struct _JSONParser
    bytes::Vector{UInt8}
    pos::Int  # 1-based index of the next byte
end

"""
    parse_json(text) -> Any

Reads one JSON value that is the whole of `text` (whitespace around it
allowed, nothing else): `Dict{String,Any}`, `Vector{Any}`, `String`,
`Int64`, `Float64`, `Bool` or `nothing`. Anything else throws a
[`JSONError`](@ref).
"""
function parse_json(text::AbstractString)
    s = String(text)
    isvalid(String, s) || throw(JSONError(0, "the text is not valid UTF-8"))
    p = _JSONParser(collect(codeunits(s)), 1)
    _json_skip_whitespace!(p)
    value = _json_value(p, 0)
    _json_skip_whitespace!(p)
    p.pos <= length(p.bytes) && _json_error(p, "unexpected text after the value")
    return value
end

@noinline _json_error(p::_JSONParser, message::AbstractString) =
    throw(JSONError(p.pos - 1, String(message)))

_json_peek(p::_JSONParser, ahead::Int = 0) =
    p.pos + ahead <= length(p.bytes) ? p.bytes[p.pos + ahead] : _JSON_END

_json_isdigit(b::UInt8) = UInt8('0') <= b <= UInt8('9')

function _json_skip_whitespace!(p::_JSONParser)
    while _json_peek(p) in (UInt8(' '), UInt8('\t'), UInt8('\n'), UInt8('\r'))
        p.pos += 1
    end
    return nothing
end

function _json_value(p::_JSONParser, depth::Int)
    b = _json_peek(p)
    if b == _JSON_END
        _json_error(p, "expected a value, found the end of the text")
    elseif b == UInt8('{')
        return _json_object(p, depth + 1)
    elseif b == UInt8('[')
        return _json_array(p, depth + 1)
    elseif b == UInt8('"')
        return _json_string(p)
    elseif b == UInt8('-') || _json_isdigit(b)
        return _json_number(p)
    elseif b == UInt8('t')
        return _json_literal(p, "true", true)
    elseif b == UInt8('f')
        return _json_literal(p, "false", false)
    elseif b == UInt8('n')
        return _json_literal(p, "null", nothing)
    end
    _json_error(p, "expected a value")
end

function _json_literal(p::_JSONParser, word::String, value)
    w = codeunits(word)
    for i in 1:length(w)
        _json_peek(p, i - 1) == w[i] || _json_error(p, "expected a value (`$(word)`?)")
    end
    p.pos += length(w)
    return value
end

function _json_enter(p::_JSONParser, depth::Int)
    depth > JSON_MAX_DEPTH && _json_error(p, "nested deeper than $(JSON_MAX_DEPTH) levels")
    return nothing
end

function _json_array(p::_JSONParser, depth::Int)
    _json_enter(p, depth)
    p.pos += 1  # '['
    items = Any[]
    _json_skip_whitespace!(p)
    if _json_peek(p) == UInt8(']')
        p.pos += 1
        return items
    end
    while true
        _json_skip_whitespace!(p)
        push!(items, _json_value(p, depth))
        _json_skip_whitespace!(p)
        b = _json_peek(p)
        if b == UInt8(',')
            p.pos += 1
        elseif b == UInt8(']')
            p.pos += 1
            return items
        else
            _json_error(p, "expected `,` or `]` in an array")
        end
    end
end

function _json_object(p::_JSONParser, depth::Int)
    _json_enter(p, depth)
    p.pos += 1  # '{'
    members = Dict{String,Any}()
    _json_skip_whitespace!(p)
    if _json_peek(p) == UInt8('}')
        p.pos += 1
        return members
    end
    while true
        _json_skip_whitespace!(p)
        _json_peek(p) == UInt8('"') ||
            _json_error(p, "expected a member name (a string) in an object")
        key = _json_string(p)
        _json_skip_whitespace!(p)
        _json_peek(p) == UInt8(':') || _json_error(p, "expected `:` after a member name")
        p.pos += 1
        _json_skip_whitespace!(p)
        members[key] = _json_value(p, depth)
        _json_skip_whitespace!(p)
        b = _json_peek(p)
        if b == UInt8(',')
            p.pos += 1
        elseif b == UInt8('}')
            p.pos += 1
            return members
        else
            _json_error(p, "expected `,` or `}` in an object")
        end
    end
end

# A string starting at its opening quote. Runs of plain bytes are copied
# whole: they are valid UTF-8 (the text was checked) and end at ASCII bytes.
function _json_string(p::_JSONParser)
    p.pos += 1  # '"'
    io = IOBuffer()
    run = p.pos  # first byte not yet copied
    while true
        b = _json_peek(p)
        if b == _JSON_END
            _json_error(p, "unterminated string")
        elseif b == UInt8('"')
            write(io, view(p.bytes, run:p.pos-1))
            p.pos += 1
            return String(take!(io))
        elseif b == UInt8('\\')
            write(io, view(p.bytes, run:p.pos-1))
            p.pos += 1
            _json_escape!(io, p)
            run = p.pos
        elseif b < 0x20
            _json_error(p, "control character 0x$(string(b, base = 16, pad = 2)) in a string " *
                           "(escape it)")
        else
            p.pos += 1
        end
    end
end

# One escape, after its backslash.
function _json_escape!(io::IOBuffer, p::_JSONParser)
    b = _json_peek(p)
    b == _JSON_END && _json_error(p, "unterminated escape")
    p.pos += 1
    c = if b == UInt8('"')
        '"'
    elseif b == UInt8('\\')
        '\\'
    elseif b == UInt8('/')
        '/'
    elseif b == UInt8('b')
        Char(0x08)
    elseif b == UInt8('f')
        Char(0x0c)
    elseif b == UInt8('n')
        Char(0x0a)
    elseif b == UInt8('r')
        Char(0x0d)
    elseif b == UInt8('t')
        Char(0x09)
    elseif b == UInt8('u')
        _json_unicode_escape(p)
    else
        p.pos -= 1
        _json_error(p, "invalid escape (a backslash before byte 0x$(string(b, base = 16, pad = 2)))")
    end
    print(io, c)  # UTF-8
    return nothing
end

# The character of \uXXXX (after the u), joining a surrogate pair
# \uD83D\uDE00 into one character.
function _json_unicode_escape(p::_JSONParser)
    high = _json_hex4(p)
    if 0xD800 <= high <= 0xDBFF
        if !(_json_peek(p) == UInt8('\\') && _json_peek(p, 1) == UInt8('u'))
            _json_error(p, "high surrogate without a low one after it")
        end
        p.pos += 2
        low = _json_hex4(p)
        0xDC00 <= low <= 0xDFFF ||
            _json_error(p, "high surrogate followed by a \\u escape that is not a low surrogate")
        return Char(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    elseif 0xDC00 <= high <= 0xDFFF
        _json_error(p, "low surrogate without a high one before it")
    end
    return Char(high)
end

function _json_hex4(p::_JSONParser)
    v = UInt32(0)
    for _ in 1:4
        b = _json_peek(p)
        d = if _json_isdigit(b)
            b - UInt8('0')
        elseif UInt8('a') <= b <= UInt8('f')
            b - UInt8('a') + 0x0a
        elseif UInt8('A') <= b <= UInt8('F')
            b - UInt8('A') + 0x0a
        else
            _json_error(p, "expected 4 hex digits after \\u")
        end
        v = v * UInt32(16) + UInt32(d)
        p.pos += 1
    end
    return v
end

# -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
function _json_number(p::_JSONParser)
    start = p.pos
    _json_peek(p) == UInt8('-') && (p.pos += 1)
    b = _json_peek(p)
    if b == UInt8('0')
        p.pos += 1
        _json_isdigit(_json_peek(p)) && _json_error(p, "a number cannot have a leading zero")
    elseif _json_isdigit(b)
        _json_digits!(p)
    else
        _json_error(p, "expected a digit")
    end
    integer = true
    if _json_peek(p) == UInt8('.')
        integer = false
        p.pos += 1
        _json_isdigit(_json_peek(p)) || _json_error(p, "expected a digit after the decimal point")
        _json_digits!(p)
    end
    if _json_peek(p) == UInt8('e') || _json_peek(p) == UInt8('E')
        integer = false
        p.pos += 1
        (_json_peek(p) == UInt8('+') || _json_peek(p) == UInt8('-')) && (p.pos += 1)
        _json_isdigit(_json_peek(p)) || _json_error(p, "expected a digit in the exponent")
        _json_digits!(p)
    end
    text = String(p.bytes[start:p.pos-1])
    if integer
        i = tryparse(Int64, text)
        i === nothing || return i
    end
    f = tryparse(Float64, text)
    (f === nothing || !isfinite(f)) && throw(JSONError(start - 1, "number $(text) is out of range"))
    return f
end

function _json_digits!(p::_JSONParser)
    while _json_isdigit(_json_peek(p))
        p.pos += 1
    end
    return nothing
end
