# Errors: every failing C call becomes a StrideMemError carrying the status and
# the library's own message (sm_last_error, read at once, on the same thread).

"""
    StrideMemError(status, message)

Thrown when a libstridemem call fails. `status` is the C status code
(`LibStrideMem.SM_ERR_SHAPE`, ...; codes added by later versions of the
library are passed through unchanged) and `message` is the library's
explanation of this failure (which call, which argument, which values).
"""
struct StrideMemError <: Exception
    status::Int32
    message::String
end

"""
    status_name(status) -> String

The library's static description of a status code (`sm_status_string`).
"""
status_name(status::Integer) = _cstring(sm_status_string(Int32(status)))

_cstring(s::Cstring) = s == C_NULL ? "" : unsafe_string(s)

function Base.showerror(io::IO, e::StrideMemError)
    print(io, "StrideMemError: ", status_name(e.status), " (status ", e.status, ")")
    isempty(e.message) || print(io, ": ", e.message)
end

# Builds the error from the calling thread's last failure. @noinline and kept
# out of `check` so the success path stays a compare and a branch.
@noinline function _status_error(status::Int32)
    return StrideMemError(status, _cstring(sm_last_error()))
end

@noinline _throw_status(status::Int32) = throw(_status_error(status))

"""
    check(status)

Returns `nothing` for `SM_OK`, throws the `StrideMemError` of the failure
otherwise. Call it right after the C call (the message is per thread).
"""
@inline check(status::Int32) = status == SM_OK ? nothing : _throw_status(status)

# Errors raised by this package itself, before any C call, use the same type
# and status codes so callers handle one exception type.
@noinline _argument_error(msg::AbstractString) =
    throw(StrideMemError(SM_ERR_INVALID_ARGUMENT, String(msg)))
@noinline _released_error(what::AbstractString) =
    throw(StrideMemError(SM_ERR_INVALID_HANDLE, "$(what) was released"))
