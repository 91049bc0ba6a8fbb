//! A small DevTools-protocol client for the browser tests: starts Debian's headless
//! chromium with a private profile, attaches to its page over a WebSocket, sends
//! commands, and keeps every event (console messages, exceptions, log entries) so a
//! test can say none was an error. The browser is killed when the client is dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The browser process, killed when dropped (also when a test fails while starting it).
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Fails the test unless chromium is here (`helpers::require_stack`).
pub(crate) fn available() {
    let ok = Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    crate::helpers::require_stack("browser", ok, "bash scripts/setup-browser.sh")
}

/// A headless chromium and its page.
pub(crate) struct Browser {
    _process: Process,
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Every event seen, in order.
    pub(crate) events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromium (`scripts/setup-browser.sh` installs it) with a window of
    /// `width`×`height`.
    pub(crate) fn start(width: u32, height: u32) -> Self {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium is not installed: run scripts/setup-browser.sh");
        let stderr = child.stderr.take().unwrap();
        let process = Process(child);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let browser_url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium did not open its DevTools port within 30s");
        let port = browser_url
            .trim_start_matches("ws://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let page_url = page_socket(&port);
        let (socket, _) = tungstenite::connect(page_url.as_str()).expect("attach to the page");
        if let MaybeTlsStream::Plain(s) = socket.get_ref() {
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
        }
        let mut browser = Self {
            _process: process,
            socket,
            next_id: 0,
            events: Vec::new(),
            _profile: profile,
        };
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.call(domain, json!({}));
        }
        browser
    }

    /// Sends a command and returns its result (panics on a protocol error).
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let text = json!({"id": id, "method": method, "params": params}).to_string();
        self.socket.send(Message::Text(text.into())).unwrap();
        let clock = Instant::now();
        loop {
            assert!(
                clock.elapsed() < Duration::from_secs(30),
                "no answer to {method}"
            );
            let Some(message) = self.read() else { continue };
            if message["id"] == id {
                if let Some(e) = message.get("error") {
                    panic!("{method}: {e}");
                }
                return message["result"].clone();
            }
            self.events.push(message);
        }
    }

    /// Evaluates `expression` in the page and returns its value.
    pub(crate) fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    pub(crate) fn wait_for(&mut self, expression: &str) {
        let clock = Instant::now();
        while self.eval(expression) != json!(true) {
            assert!(
                clock.elapsed() < Duration::from_secs(20),
                "never true: {expression}"
            );
            self.pump(Duration::from_millis(100));
        }
    }

    /// Reads events for `time`.
    pub(crate) fn pump(&mut self, time: Duration) {
        let clock = Instant::now();
        while clock.elapsed() < time {
            if let Some(m) = self.read() {
                self.events.push(m);
            }
        }
    }

    /// Opens `url` and waits for its load event.
    pub(crate) fn open(&mut self, url: &str) {
        // A load event seen before (about:blank's) must not count.
        self.events.retain(|e| e["method"] != "Page.loadEventFired");
        self.call("Page.navigate", json!({"url": url}));
        let clock = Instant::now();
        while !self
            .events
            .iter()
            .any(|e| e["method"] == "Page.loadEventFired")
        {
            assert!(
                clock.elapsed() < Duration::from_secs(20),
                "{url} never loaded"
            );
            self.pump(Duration::from_millis(100));
        }
    }

    /// A real mouse click at the centre of the first element matching `selector`, scrolled
    /// into view first.
    pub(crate) fn click(&mut self, selector: &str) {
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({selector:?}); e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// A key typed on the keyboard: a character, or `Escape`.
    pub(crate) fn key(&mut self, key: &str) {
        let mut down = json!({"type": "keyDown", "key": key});
        if key == "Escape" {
            down["code"] = "Escape".into();
            down["windowsVirtualKeyCode"] = 27.into();
        } else {
            down["text"] = key.into();
        }
        self.call("Input.dispatchKeyEvent", down);
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key}),
        );
    }

    /// A PNG of the page as it is shown.
    pub(crate) fn screenshot(&mut self) -> Vec<u8> {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }

    /// The console errors, exceptions and error log entries seen so far.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| {
                let m = &e["method"];
                *m == "Runtime.exceptionThrown"
                    || (*m == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                    || (*m == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
            })
            .map(Value::to_string)
            .collect()
    }

    fn read(&mut self) -> Option<Value> {
        match self.socket.read() {
            Ok(Message::Text(t)) => serde_json::from_str(t.as_str()).ok(),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("the browser's socket: {e}"),
        }
    }
}

/// The WebSocket URL of the browser's page (from its `/json/list`).
fn page_socket(port: &str) -> String {
    let clock = Instant::now();
    loop {
        // HTTP/1.1 with the port in Host (chromium answers nothing else), and a body
        // read by its length (it keeps the connection open).
        let s = TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            &s,
            "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(&s);
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let targets: Value = serde_json::from_slice(&body).unwrap_or(json!([]));
        if let Some(url) = targets
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
        {
            return url.to_string();
        }
        assert!(clock.elapsed() < Duration::from_secs(20), "no page target");
        std::thread::sleep(Duration::from_millis(100));
    }
}
