# scimcp's one-command installer for Windows (published with every release as
# scimcp-installer.ps1). Mirrors scripts/install.sh step by step:
#
#   irm https://github.com/scimcp/scimcp/releases/latest/download/scimcp-installer.ps1 | iex
#   $env:SCIMCP_ADAPTER = "geochemistrypi"; irm …/scimcp-installer.ps1 | iex
#   & ([scriptblock]::Create((irm …/scimcp-installer.ps1))) --adapter geochemistrypi
#
# It downloads this computer's signed release bundle (scimcp-<version>-<target>.zip) and its
# Sigstore signature into a temporary folder, takes scimcp-setup.exe out of the bundle, and
# runs `scimcp-setup install --from <bundle>`: scimcp-setup verifies the signature against the
# release policy built into it before anything is unpacked, then installs into your own data
# folder (%APPDATA%\scimcp\data), provisions each adapter's runtime and registers it in every
# AI client it finds. No administrator rights are needed.
#
# Arguments are passed to `scimcp-setup install`. Settings from the environment:
#   SCIMCP_ADAPTER        adapters to install, separated by commas (like --adapter)
#   SCIMCP_VERSION        a version (1.2.3) instead of the newest release
#   SCIMCP_REPO           owner/name of the GitHub repository (default scimcp/scimcp)
#   SCIMCP_DOWNLOAD_URL   a folder URL holding the release files (a mirror)
#
# Not run in CI (no PowerShell there yet): keep it as small as install.sh and change both
# together.

$ErrorActionPreference = "Stop"
$ProgressPreference = "SilentlyContinue"

# The release this copy belongs to: set when a release publishes it, empty in the repository
# (then the newest release is used).
$ReleaseTag = ""

function Fail($message) {
    Write-Error "scimcp-installer: error: $message"
    exit 1
}

$repo = if ($env:SCIMCP_REPO) { $env:SCIMCP_REPO } else { "scimcp/scimcp" }
$arch = [System.Runtime.InteropServices.RuntimeInformation]::OSArchitecture
if ($arch -ne [System.Runtime.InteropServices.Architecture]::X64) {
    Fail "scimcp has no build for Windows on $arch; see https://github.com/$repo#install"
}
$target = "x86_64-pc-windows-msvc"

$tag = $ReleaseTag
if ($env:SCIMCP_VERSION) { $tag = "v" + $env:SCIMCP_VERSION.TrimStart("v") }
if (-not $tag) {
    if ($env:SCIMCP_DOWNLOAD_URL) { Fail "SCIMCP_DOWNLOAD_URL needs SCIMCP_VERSION" }
    # GitHub redirects /releases/latest to /releases/tag/<tag>: no API call, no rate limit.
    $latest = Invoke-WebRequest -UseBasicParsing -Uri "https://github.com/$repo/releases/latest"
    $tag = ($latest.BaseResponse.ResponseUri.AbsoluteUri, $latest.BaseResponse.RequestMessage.RequestUri.AbsoluteUri |
        Where-Object { $_ } | Select-Object -First 1).Split("/")[-1]
}
$version = $tag.TrimStart("v")
if ($version -notmatch '^\d+\.\d+\.\d+') { Fail "'$tag' is not a release tag (vMAJOR.MINOR.PATCH)" }
$base = if ($env:SCIMCP_DOWNLOAD_URL) { $env:SCIMCP_DOWNLOAD_URL.TrimEnd("/") } else { "https://github.com/$repo/releases/download/$tag" }
$bundle = "scimcp-$version-$target.zip"

$tmp = Join-Path ([System.IO.Path]::GetTempPath()) ("scimcp-" + [System.Guid]::NewGuid())
New-Item -ItemType Directory -Path $tmp | Out-Null
try {
    Write-Host "scimcp-installer: downloading scimcp $version for $target"
    $zip = Join-Path $tmp $bundle
    Invoke-WebRequest -UseBasicParsing -Uri "$base/$bundle" -OutFile $zip
    Invoke-WebRequest -UseBasicParsing -Uri "$base/$bundle.sigstore.json" -OutFile "$zip.sigstore.json"

    # Only scimcp-setup.exe comes out of the bundle here; it verifies the bundle's signature
    # before it unpacks anything else.
    Add-Type -AssemblyName System.IO.Compression.FileSystem
    $setup = Join-Path $tmp "scimcp-setup.exe"
    $archive = [System.IO.Compression.ZipFile]::OpenRead($zip)
    try {
        # Under one folder named like the zip (older bundles: at the top).
        $entry = $archive.GetEntry("scimcp-$version-$target/bin/scimcp-setup.exe")
        if (-not $entry) { $entry = $archive.GetEntry("bin/scimcp-setup.exe") }
        if (-not $entry) { Fail "$bundle has no bin/scimcp-setup.exe" }
        [System.IO.Compression.ZipFileExtensions]::ExtractToFile($entry, $setup)
    } finally {
        $archive.Dispose()
    }

    $arguments = @("install", "--from", $zip)
    if ($env:SCIMCP_ADAPTER) {
        foreach ($adapter in $env:SCIMCP_ADAPTER.Split(",")) {
            if ($adapter.Trim()) { $arguments += @("--adapter", $adapter.Trim()) }
        }
    }
    $arguments += $args
    Write-Host "scimcp-installer: verifying and installing (scimcp-setup install)"
    & $setup @arguments
    if ($LASTEXITCODE -ne 0) {
        Fail "scimcp-setup install failed (exit status $LASTEXITCODE); the message above says why"
    }
    $root = (& $setup status --json | ConvertFrom-Json).data_root
    Write-Host "scimcp-installer: done: scimcp $version is installed in $root"
    Write-Host "scimcp-installer: check it any time with: & `"$root\versions\$version\bin\scimcp-doctor.exe`""
} finally {
    Remove-Item -Recurse -Force $tmp -ErrorAction SilentlyContinue
}
